# javadoc_jar.cmake: the Javadoc of the binding's public API into DOC_DIR, javadoc's output kept
# in LOG (the test java_maven reads it), then the jar OUT of DOC_DIR. Fails, showing the output,
# when javadoc reports an error; warnings pass.
#   cmake -DJAVADOC=... -DJAR=... -DSOURCE_DIR=<src> -DDOC_DIR=... -DLOG=... -DOUT=...
#         -DVERSION=... -P javadoc_jar.cmake
file(REMOVE_RECURSE ${DOC_DIR})
execute_process(
  COMMAND ${JAVADOC} -quiet -notimestamp --release 17 -encoding UTF-8 -docencoding UTF-8
          -charset UTF-8 -windowtitle "polygpu ${VERSION}" -doctitle "polygpu ${VERSION} API"
          -d ${DOC_DIR} -sourcepath ${SOURCE_DIR} polygpu
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
file(WRITE ${LOG} "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "javadoc failed (exit ${rc}); its output:\n${out}")
endif()
file(REMOVE ${OUT})
execute_process(COMMAND ${JAR} cf ${OUT} -C ${DOC_DIR} . RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "jar cf ${OUT} failed (exit ${rc})")
endif()
