# Install rules: headers, both libraries, a CMake package (park::park,
# park::park_static) and a pkg-config file. The installed tree is
# relocatable: both the CMake package and park.pc find the headers and
# libraries relative to their own location, so `cmake --install --prefix`
# may pick any prefix after configuring.

include(CMakePackageConfigHelpers)

set(PARK_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/park)

# A directory rule, not a file list, so headers added later are installed
# without reconfiguring. park.hpp, the header-only C++ layer, goes with them.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/park/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/park
        FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/park/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/park)

install(TARGETS park park_static
        EXPORT parkTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT parkTargets
        NAMESPACE park::
        DESTINATION ${PARK_INSTALL_CMAKEDIR})

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/parkConfig.cmake.in
  ${PROJECT_BINARY_DIR}/parkConfig.cmake
  INSTALL_DESTINATION ${PARK_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/parkConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
          ${PROJECT_BINARY_DIR}/parkConfig.cmake
          ${PROJECT_BINARY_DIR}/parkConfigVersion.cmake
        DESTINATION ${PARK_INSTALL_CMAKEDIR})

# park.pc locates the prefix from its own directory (${pcfiledir}), unless
# the library or include directory was given as an absolute path.
set(park_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(PARK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(PARK_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(PARK_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH park_pc_up /prefix/${park_pc_dir} /prefix)
  string(REGEX REPLACE "/$" "" park_pc_up "${park_pc_up}")
  set(PARK_PC_PREFIX "\${pcfiledir}/${park_pc_up}")
  set(PARK_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(PARK_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/park.pc.in ${PROJECT_BINARY_DIR}/park.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/park.pc DESTINATION ${park_pc_dir})
