# Configures, builds and runs a consumer that pulls Netlayer in with add_subdirectory().
# It reuses the main build's SwiftPM folder so the library is not compiled twice.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK}")
run("${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}/build" -G "${GENERATOR}"
    "-DNETLAYER_SOURCE=${NETLAYER_SOURCE}" "-DNETLAYER_SWIFTPM_SCRATCH=${NETLAYER_SCRATCH}")
run("${CMAKE_COMMAND}" --build "${WORK}/build")
run(${WITH_SERVER} "${WORK}/build/consumer")
message(STATUS "add_subdirectory consumer ok")
