# DeeplinkGen.cmake: run `deeplink-gen render` from a DIPU build.
#
#   include(/path/to/deeplink-gen/cmake/DeeplinkGen.cmake)
#   deeplink_gen_render(VENDOR camb WORKSPACE /path/to/workspace OUTPUT_DIR ${CMAKE_BINARY_DIR}/generated
#                       [AUTOCOMPARE | NO_AUTOCOMPARE] [SHARDS N] [DIOPI_INCLUDE dir]
#                       [TARGET deeplink_gen_camb] [COMMAND deeplink-gen])
#
# AUTOCOMPARE, NO_AUTOCOMPARE, SHARDS and DIOPI_INCLUDE are render's --autocompare,
# --no-autocompare, --shards and --diopi-include.
#   add_dependencies(torch_dipu deeplink_gen_camb)
#
# At configure time the vendor is rendered once, so the output list (read from
# the rendered manifest.json) is exact. At build time a custom command re-renders
# whenever an input changes: the vendor file, its hand-written vendors/<name>/
# files, the op catalog, deeplink-gen's templates, schemas and Python sources. deeplink-gen writes only files whose
# content changed, so an unchanged render rebuilds nothing (Ninja restats the
# byproducts; Make compares the untouched mtimes). Editing the vendor file or the
# catalog also re-runs configure, so a changed output list is picked up.

cmake_minimum_required(VERSION 3.19)  # string(JSON)

function(deeplink_gen_render)
  cmake_parse_arguments(DLG "AUTOCOMPARE;NO_AUTOCOMPARE" "VENDOR;WORKSPACE;OUTPUT_DIR;TARGET;COMMAND;SHARDS;DIOPI_INCLUDE"
                        "" ${ARGN})
  foreach(required VENDOR WORKSPACE OUTPUT_DIR)
    if(NOT DLG_${required})
      message(FATAL_ERROR "deeplink_gen_render: ${required} is required")
    endif()
  endforeach()
  if(NOT DLG_TARGET)
    set(DLG_TARGET deeplink_gen_${DLG_VENDOR})
  endif()
  if(NOT DLG_COMMAND)
    find_program(DLG_COMMAND deeplink-gen REQUIRED)
  endif()
  find_package(Python3 COMPONENTS Interpreter REQUIRED)

  if(DLG_AUTOCOMPARE AND DLG_NO_AUTOCOMPARE)
    message(FATAL_ERROR "deeplink_gen_render: give AUTOCOMPARE or NO_AUTOCOMPARE, not both")
  endif()
  set(global_args -C ${DLG_WORKSPACE})
  if(DLG_DIOPI_INCLUDE)
    list(APPEND global_args --diopi-include ${DLG_DIOPI_INCLUDE})
  endif()
  set(render_args --vendor ${DLG_VENDOR} --out ${DLG_OUTPUT_DIR} --allow-outside-workspace)
  if(DLG_AUTOCOMPARE)
    list(APPEND render_args --autocompare)
  elseif(DLG_NO_AUTOCOMPARE)
    list(APPEND render_args --no-autocompare)
  endif()
  if(DLG_SHARDS)
    list(APPEND render_args --shards ${DLG_SHARDS})
  endif()
  set(render_cmd ${DLG_COMMAND} ${global_args} render ${render_args})
  execute_process(COMMAND ${render_cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "deeplink-gen render failed:\n${out}${err}")
  endif()

  # Inputs: the vendor file, the catalog, and the installed package's templates/schemas/sources.
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import deeplink_gen, os; print(os.path.dirname(deeplink_gen.__file__))"
    OUTPUT_VARIABLE pkg OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "deeplink_gen_render: ${Python3_EXECUTABLE} cannot import deeplink_gen")
  endif()
  set(vendor_file ${DLG_WORKSPACE}/vendors/${DLG_VENDOR}.yaml)
  file(GLOB catalog CONFIGURE_DEPENDS ${DLG_WORKSPACE}/catalog/*.yaml ${DLG_WORKSPACE}/deeplink-gen.yaml)
  file(GLOB_RECURSE hand_written CONFIGURE_DEPENDS ${DLG_WORKSPACE}/vendors/${DLG_VENDOR}/*)
  file(GLOB_RECURSE package_files CONFIGURE_DEPENDS ${pkg}/*.py ${pkg}/*.j2 ${pkg}/*.json ${pkg}/*.yaml)
  get_filename_component(repo_schemas ${pkg}/../schemas ABSOLUTE)
  file(GLOB schemas CONFIGURE_DEPENDS ${repo_schemas}/*.json)
  set(diopi_headers "")
  if(DLG_DIOPI_INCLUDE)
    file(GLOB_RECURSE diopi_headers CONFIGURE_DEPENDS ${DLG_DIOPI_INCLUDE}/*.h)
  endif()
  set(inputs ${vendor_file} ${catalog} ${hand_written} ${package_files} ${schemas} ${diopi_headers})
  list(SORT inputs)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${vendor_file} ${catalog})

  # Outputs: every file listed in the rendered manifest.json, plus the manifest itself.
  set(root ${DLG_OUTPUT_DIR}/${DLG_VENDOR})
  file(READ ${root}/manifest.json manifest)
  string(JSON count LENGTH "${manifest}" files)
  set(outputs ${root}/manifest.json)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON path GET "${manifest}" files ${i} path)
    list(APPEND outputs ${root}/${path})
  endforeach()
  list(REMOVE_DUPLICATES outputs)

  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${DLG_TARGET}.stamp)
  add_custom_command(
    OUTPUT ${stamp}
    BYPRODUCTS ${outputs}
    COMMAND ${render_cmd}
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${inputs}
    COMMENT "deeplink-gen: rendering ${DLG_VENDOR}"
    VERBATIM)
  add_custom_target(${DLG_TARGET} DEPENDS ${stamp})
  set(${DLG_TARGET}_OUTPUTS ${outputs} PARENT_SCOPE)
endfunction()
