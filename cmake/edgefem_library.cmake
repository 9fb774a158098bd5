# SPDX-License-Identifier: BSD-3-Clause
# edgefem_library(<folder> [PUBLIC <targets>...] [PRIVATE <targets>...])
#   The library target edgefem_<folder> of every <folder>/*.cpp: the project root on its include path (headers are
#   included as "folder/file.hpp"), the warnings, and the dependencies the folder really has: PUBLIC those its
#   headers need, PRIVATE those only its sources need. A folder without sources is an INTERFACE target. With
#   EDGEFEM_UNITY the folder's files are compiled in unity batches (CMake's UNITY_BUILD, 8 files a batch).
function(edgefem_library folder)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "PUBLIC;PRIVATE")
  set(target edgefem_${folder})
  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${folder}/*.cpp)
  if(sources AND EDGEFEM_FUZZ AND EDGEFEM_FUZZ_PREBUILT AND NOT folder MATCHES "^(io|run)$")
    # The fuzz build's quick mode (fuzz/CMakeLists.txt): the folder's library as the Release build made it, the
    # same dependencies (a static library carries its private ones to the link).
    add_library(${target} STATIC IMPORTED GLOBAL)
    set(private_links)
    foreach(dependency IN LISTS arg_PRIVATE)
      list(APPEND private_links $<LINK_ONLY:${dependency}>)
    endforeach()
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION ${EDGEFEM_FUZZ_PREBUILT}/lib${target}.a
                          INTERFACE_INCLUDE_DIRECTORIES ${PROJECT_SOURCE_DIR}
                          INTERFACE_LINK_LIBRARIES "${arg_PUBLIC};${private_links}")
  elseif(sources)
    add_library(${target} ${sources})
    target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>)
    target_link_libraries(${target} PUBLIC ${arg_PUBLIC} PRIVATE ${arg_PRIVATE} edgefem_warnings)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ${EDGEFEM_UNITY})
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>)
    target_link_libraries(${target} INTERFACE ${arg_PUBLIC})
  endif()
endfunction()
