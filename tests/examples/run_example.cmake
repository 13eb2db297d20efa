# Runs the example as a user would and holds it to what it promises:
#   cmake -DPROGRAM=... -DARGS="a;b;c" -DMIN_ACCURACY=0.5 [-DEXPECT=regex] -P run_example.cmake
# The process must exit with 0, print its table of test accuracies, reach MIN_ACCURACY
# in its last epoch, and print EXPECT (a regular expression) where given.
execute_process(COMMAND "${PROGRAM}" ${ARGS} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}\n${err}")
if(NOT result EQUAL 0)
  message(FATAL_ERROR "exit status ${result}: ${PROGRAM} ${ARGS}\n${all}")
endif()
string(REGEX MATCHALL "\n +[0-9]+  (0\\.[0-9]+|1\\.0+)" rows "${out}")
if(NOT rows)
  message(FATAL_ERROR "no table of test accuracies in the output:\n${all}")
endif()
list(GET rows -1 last)
string(REGEX REPLACE ".*  " "" accuracy "${last}")
if(accuracy LESS MIN_ACCURACY)
  message(FATAL_ERROR "test accuracy ${accuracy} is below ${MIN_ACCURACY}:\n${all}")
endif()
if(DEFINED EXPECT AND NOT all MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match '${EXPECT}':\n${all}")
endif()
message(STATUS "test accuracy ${accuracy} (at least ${MIN_ACCURACY})")
