# Runs the example as a user would and holds it to what it promises:
#   cmake -DPROGRAM=... -DARGS="a;b;c" -DMIN_ACCURACY=0.5 [-DEXPECT=regex] -P run_example.cmake
#   cmake -DPROGRAM=... -DARGS="a;b;c" -DFAILS=1 -DEXPECT=regex -P run_example.cmake
#   cmake -DPROGRAM=... -DARGS="a;b;c" -DNO_TRAINING=1 -DEXPECT=regex -P run_example.cmake
# The process must exit with 0, print its table of test accuracies, reach MIN_ACCURACY
# in its last epoch, and print EXPECT (a regular expression) where given. With FAILS, it
# must exit with a non-zero status (not a crash) and print EXPECT. With NO_TRAINING (a
# run that trains nothing, such as --export), it must exit with 0 and print EXPECT.
# REJECT (any mode): a regular expression the output must not match.
# FRESH_LOGDIR: removed first, so that repeated runs do not pile up the backups the
# example makes of an existing log directory.
if(FRESH_LOGDIR)
  file(REMOVE_RECURSE "${FRESH_LOGDIR}")
endif()
execute_process(COMMAND "${PROGRAM}" ${ARGS} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${err}\n${out}")  # the log (stderr) comes before the table (stdout)
if(DEFINED REJECT AND all MATCHES "${REJECT}")
  message(FATAL_ERROR "the output matches '${REJECT}', which it must not:\n${all}")
endif()
if(FAILS)
  if(result EQUAL 0 OR NOT result MATCHES "^[0-9]+$")
    message(FATAL_ERROR "expected a failure (a non-zero exit status), got '${result}': ${PROGRAM} ${ARGS}\n${all}")
  endif()
  if(NOT all MATCHES "${EXPECT}")
    message(FATAL_ERROR "the output does not match '${EXPECT}':\n${all}")
  endif()
  message(STATUS "failed as expected (exit status ${result})")
  return()
endif()
if(NOT result EQUAL 0)
  message(FATAL_ERROR "exit status ${result}: ${PROGRAM} ${ARGS}\n${all}")
endif()
if(NO_TRAINING)
  if(NOT all MATCHES "${EXPECT}")
    message(FATAL_ERROR "the output does not match '${EXPECT}':\n${all}")
  endif()
  return()
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
