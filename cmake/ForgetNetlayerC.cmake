# Removes the objects of the NetlayerC module in a SwiftPM scratch folder (-DBUILD=...),
# so that the next `swift build` compiles it again. See CMakeLists.txt: SwiftPM does
# not rebuild a module for a change it sees only through a re-export.
file(GLOB _objects "${BUILD}/NetlayerC.build/*.o")
if(_objects)
  file(REMOVE ${_objects})
endif()
