# Configures, builds and runs a consumer that pulls Netlayer in with add_subdirectory().
# It reuses the main build's SwiftPM folder so the library is not compiled twice.
# With the defaults, Netlayer must add no CLI, examples, tests or install rules; a
# second configuration turns them on and checks that they appear.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK}")
set(common -G "${GENERATOR}" "-DNETLAYER_SOURCE=${NETLAYER_SOURCE}" "-DNETLAYER_SWIFTPM_SCRATCH=${NETLAYER_SCRATCH}")
run("${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}/build" ${common} -DEXPECT_EXTRAS=OFF)
run("${CMAKE_COMMAND}" --build "${WORK}/build")
run(${WITH_SERVER} "${WORK}/build/consumer")

# No install rules: installing the consumer's build puts nothing of Netlayer's anywhere.
run("${CMAKE_COMMAND}" --install "${WORK}/build" --prefix "${WORK}/prefix")
file(GLOB_RECURSE installed "${WORK}/prefix/*")
if(installed)
  message(FATAL_ERROR "a vendored Netlayer installed files by default: ${installed}")
endif()

run("${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}/build-extras" ${common} -DEXPECT_EXTRAS=ON
    -DNETLAYER_BUILD_CLI=ON -DNETLAYER_BUILD_EXAMPLES=ON -DNETLAYER_BUILD_TESTS=ON)
message(STATUS "add_subdirectory consumer ok")
