# Installs the Netlayer build into a fresh prefix, then configures, builds and runs a
# consumer that finds it with find_package(netlayer CONFIG REQUIRED); also checks netlayer.pc.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK}")
run("${CMAKE_COMMAND}" --install "${NETLAYER_BUILD}" --prefix "${WORK}/prefix")
run("${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}/build" -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${WORK}/prefix")
run("${CMAKE_COMMAND}" --build "${WORK}/build")
run(${WITH_SERVER} "${WORK}/build/consumer")
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "PKG_CONFIG_PATH=${WORK}/prefix/lib/pkgconfig"
                        pkg-config --cflags --libs netlayer
                OUTPUT_VARIABLE flags RESULT_VARIABLE rc)
if(rc OR NOT flags MATCHES "-lnetlayer" OR NOT flags MATCHES "${WORK}/prefix/include")
  message(FATAL_ERROR "netlayer.pc gives unexpected flags: '${flags}'")
endif()
message(STATUS "find_package consumer ok; pkg-config: ${flags}")
