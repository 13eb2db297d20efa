# Runs a command and holds it to its exit status and output (ctest's own output regex
# property would ignore the exit status):
#   cmake "-DCOMMAND=prog;arg;..." -DEXPECT=regex [-DFAILS=1] -P run_command.cmake
# Without FAILS the command must exit with 0, with it with a non-zero status; either way
# its output (stderr, then stdout) must match EXPECT.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${err}\n${out}")
if(FAILS)
  if(result EQUAL 0 OR NOT result MATCHES "^[0-9]+$")
    message(FATAL_ERROR "expected a non-zero exit status, got '${result}': ${COMMAND}\n${all}")
  endif()
elseif(NOT result EQUAL 0)
  message(FATAL_ERROR "exit status ${result}: ${COMMAND}\n${all}")
endif()
if(NOT all MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match '${EXPECT}':\n${all}")
endif()
