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
# The same consumer built by a plain Makefile-style user with pkg-config.
set(pc_env "PKG_CONFIG_PATH=${WORK}/prefix/lib/pkgconfig")
execute_process(COMMAND "${CMAKE_COMMAND}" -E env ${pc_env} pkg-config --cflags --libs netlayer
                OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
if(rc OR NOT flags MATCHES "-lnetlayer")
  message(FATAL_ERROR "pkg-config netlayer failed or gave unexpected flags: '${flags}'")
endif()
separate_arguments(flag_list UNIX_COMMAND "${flags}")
# The run path the README tells pkg-config users to set: the installed libdir.
execute_process(COMMAND "${CMAKE_COMMAND}" -E env ${pc_env} pkg-config --variable=libdir netlayer
                OUTPUT_VARIABLE libdir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
if(rc OR NOT EXISTS "${libdir}/libnetlayer.so.1")
  message(FATAL_ERROR "pkg-config --variable=libdir netlayer gave '${libdir}', which has no libnetlayer.so.1")
endif()
run(cc "${SOURCE}/../consumer.c" ${flag_list} "-Wl,-rpath,${libdir}" -o "${WORK}/consumer_pc")
run(${WITH_SERVER} "${WORK}/consumer_pc")
message(STATUS "find_package and pkg-config consumers ok")
