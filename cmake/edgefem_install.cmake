# SPDX-License-Identifier: BSD-3-Clause
# `cmake --install build [--prefix DIR]` (docs/guide/building.md, "Installing"):
#   bin/edgefem                              the program
#   include/edgefem/<folder>/*.hpp            the headers, as the sources include them ("io/job.hpp"); also
#                                             reachable as <edgefem/io/job.hpp>; include/edgefem/edgefem/version.hpp
#   lib/libedgefem_<folder>.a                 one library a folder
#   lib/cmake/edgefem/                        the CMake package: find_package(edgefem) -> edgefem::edgefem
#   lib/pkgconfig/edgefem.pc                  pkg-config
#   share/edgefem/{scripts,cluster,examples}  the scripts, the Slurm/PBS templates, the example jobs and meshes
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(EDGEFEM_FOLDERS core mesh materials contact partition io linalg runtime solver pbd frames run)
set(EDGEFEM_INSTALL_INCLUDE ${CMAKE_INSTALL_INCLUDEDIR}/edgefem)
set(EDGEFEM_INSTALL_CMAKE ${CMAKE_INSTALL_LIBDIR}/cmake/edgefem)

install(TARGETS edgefem RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The libraries and edgefem::edgefem (edgefem_lib: all of them). edgefem_warnings rides along: the static
# libraries name it (an empty link-only dependency for the consumer).
set(libraries edgefem_warnings edgefem_lib)
foreach(folder IN LISTS EDGEFEM_FOLDERS)
  list(APPEND libraries edgefem_${folder})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder}/ DESTINATION ${EDGEFEM_INSTALL_INCLUDE}/${folder}
          FILES_MATCHING PATTERN "*.hpp")
  target_include_directories(edgefem_${folder} INTERFACE $<INSTALL_INTERFACE:${EDGEFEM_INSTALL_INCLUDE}>
                                                         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
install(FILES ${EDGEFEM_GENERATED_DIR}/edgefem/version.hpp DESTINATION ${EDGEFEM_INSTALL_INCLUDE}/edgefem)
set_target_properties(edgefem_lib PROPERTIES EXPORT_NAME edgefem)
install(TARGETS ${libraries} EXPORT edgefem-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT edgefem-targets NAMESPACE edgefem:: DESTINATION ${EDGEFEM_INSTALL_CMAKE})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/edgefemConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/edgefemConfig.cmake INSTALL_DESTINATION ${EDGEFEM_INSTALL_CMAKE})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/edgefemConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/edgefemConfig.cmake ${PROJECT_BINARY_DIR}/edgefemConfigVersion.cmake
        DESTINATION ${EDGEFEM_INSTALL_CMAKE})

# pkg-config: our libraries in link order, the pkg-config-known dependencies as Requires, the rest by name.
set(EDGEFEM_PC_LIBS "")
foreach(folder run frames pbd solver runtime linalg io contact partition materials mesh)
  string(APPEND EDGEFEM_PC_LIBS " -ledgefem_${folder}")
endforeach()
set(EDGEFEM_PC_VTK "")
foreach(component CommonCore CommonDataModel IOXML IOXMLParser)
  string(APPEND EDGEFEM_PC_VTK " -lvtk${component}-${VTK_MAJOR_VERSION}.${VTK_MINOR_VERSION}")
endforeach()
file(RELATIVE_PATH EDGEFEM_PC_UP /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)  # the .pc finds its prefix
configure_file(${PROJECT_SOURCE_DIR}/cmake/edgefem.pc.in ${PROJECT_BINARY_DIR}/edgefem.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/edgefem.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Scripts, cluster templates, examples.
file(GLOB edgefem_scripts ${PROJECT_SOURCE_DIR}/scripts/*.sh ${PROJECT_SOURCE_DIR}/scripts/*.py)
install(PROGRAMS ${edgefem_scripts} DESTINATION ${CMAKE_INSTALL_DATADIR}/edgefem/scripts)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scripts/sanitizers DESTINATION ${CMAKE_INSTALL_DATADIR}/edgefem/scripts)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/jobs/cluster/ DESTINATION ${CMAKE_INSTALL_DATADIR}/edgefem/cluster
        USE_SOURCE_PERMISSIONS)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/jobs/examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/edgefem/examples)
