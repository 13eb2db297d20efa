# cmake -DCOMMAND=<mpirun ... --fault=mode> -DTIMEOUT=<s> -DWITHIN=<s> -DEXPECT=<regex>
#       [-DFINISHES=1] -P fault_test.cmake
# Runs a fault drill with VKPACK_MPI_TIMEOUT=<TIMEOUT> and passes when rank 0 did not
# train to the end, the output matches <regex>, and the job ended within <WITHIN>
# seconds (start-up of two Vulkan processes and 5 steps included) instead of hanging.
# With FINISHES the fault is one the ranks must wait out: both train to the end and
# the job exits with 0.
# mpirun's exit status is not trusted alone: after MPI_Abort under --enable-recovery
# OpenMPI 4.1.4 exits with 0.
set(ENV{VKPACK_MPI_TIMEOUT} ${TIMEOUT})
math(EXPR limit "${WITHIN} + 30")
string(TIMESTAMP start "%s")
execute_process(COMMAND ${COMMAND} OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE status
  TIMEOUT ${limit})
string(TIMESTAMP end "%s")
math(EXPR elapsed "${end} - ${start}")
message("${out}")
message("fault drill: exit status ${status} after ${elapsed} s (VKPACK_MPI_TIMEOUT ${TIMEOUT} s)")
if(status MATCHES "timeout" OR elapsed GREATER WITHIN)
  message(FATAL_ERROR "the job took ${elapsed} s, more than ${WITHIN} s (exit status: ${status})")
endif()
if(FINISHES)
  foreach(rank 0 1)
    if(NOT out MATCHES "\\[rank ${rank}\\] training ended without an error")
      message(FATAL_ERROR "rank ${rank} did not train to the end")
    endif()
  endforeach()
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "the job exited with ${status}")
  endif()
elseif(out MATCHES "training ended without an error")
  message(FATAL_ERROR "rank 0 trained to the end although rank 1 left")
endif()
if(NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not say: ${EXPECT}")
endif()
