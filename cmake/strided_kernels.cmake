# The CUDA copy kernels (included from the top-level CMakeLists.txt).
#
# src/copy/kernels.cu is compiled by nvcc into a fatbin - machine code
# for each of STRIDED_CUDA_ARCHITECTURES and PTX for the newest of them, so
# that later GPUs compile it at load time - and embedded in libstrided as a
# byte array (cmake/embed_binary.cmake). CMake's CUDA language support is not
# used: only nvcc is needed, never a CUDA runtime or a CUDA-capable CMake
# toolchain. Without nvcc the library builds without its kernels, device
# copies report STRIDED_ERR_UNSUPPORTED, and configuring says so.
#
# Sets strided_kernel_sources (the generated C file, or nothing) and defines
# STRIDED_HAVE_KERNELS on src/copy/launch.c when the kernels are built.

# nvcc from PATH, $CUDA_HOME, $CUDA_PATH or the default toolkit location;
# -DSTRIDED_NVCC=/path/to/nvcc names another.
find_program(STRIDED_NVCC nvcc
  PATHS ENV CUDA_HOME ENV CUDA_PATH /usr/local/cuda
  PATH_SUFFIXES bin
  DOC "nvcc, for the CUDA copy kernels")
if(STRIDED_NVCC)
  set(strided_kernels_default ON)
else()
  set(strided_kernels_default OFF)
endif()
option(STRIDED_BUILD_KERNELS "Compile the CUDA copy kernels with nvcc and embed them"
       ${strided_kernels_default})
# By default, machine code for every GPU generation CUDA 13 supports (Turing,
# Ampere, Ada, Hopper, Blackwell datacenter and consumer) and PTX for the
# newest; docs/install.md lists them. A GPU runs machine code built for its
# own major version at the same or a lower minor one (sm_86 code runs on
# sm_87 and sm_88, sm_100 on sm_103, sm_120 on sm_121), and a GPU of a newer
# major version compiles the PTX at load time. Fewer architectures build
# faster: -DSTRIDED_CUDA_ARCHITECTURES=90 makes a library for Hopper alone.
set(STRIDED_CUDA_ARCHITECTURES "75;80;86;89;90;100;120" CACHE STRING
    "GPU architectures to compile the copy kernels for (PTX for the last)")
set(STRIDED_NVCC_FLAGS "" CACHE STRING "Extra nvcc flags for the copy kernels")
option(STRIDED_COMPRESS_KERNELS
       "Compress the embedded fatbin for size (nvcc 12.8 or later; the driver inflates it)" ON)

set(strided_kernel_sources)
if(STRIDED_BUILD_KERNELS)
  if(NOT STRIDED_NVCC)
    message(FATAL_ERROR "STRIDED_BUILD_KERNELS is ON but nvcc was not found; "
                        "put it on PATH, pass -DSTRIDED_NVCC=..., or turn the option OFF")
  endif()
  execute_process(COMMAND ${STRIDED_NVCC} --version OUTPUT_VARIABLE nvcc_text
                  RESULT_VARIABLE nvcc_rc)
  if(NOT nvcc_rc EQUAL 0 OR NOT nvcc_text MATCHES "release ([0-9]+)\\.([0-9]+)")
    message(FATAL_ERROR "${STRIDED_NVCC} --version failed; is it nvcc?")
  endif()
  set(nvcc_version "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")

  set(gencode)
  foreach(arch IN LISTS STRIDED_CUDA_ARCHITECTURES)
    list(APPEND gencode -gencode "arch=compute_${arch},code=sm_${arch}")
  endforeach()
  list(GET STRIDED_CUDA_ARCHITECTURES -1 newest)
  list(APPEND gencode -gencode "arch=compute_${newest},code=compute_${newest}")
  set(nvcc_flags -fatbin -std=c++17 -O3 -lineinfo --threads 0)
  # The smallest fatbin: 2.1 MB instead of 20 MB for the default
  # architectures (nvcc 13.0).
  if(STRIDED_COMPRESS_KERNELS AND nvcc_version VERSION_GREATER_EQUAL 12.8)
    list(APPEND nvcc_flags --compress-mode=size)
  endif()
  separate_arguments(extra_flags UNIX_COMMAND "${STRIDED_NVCC_FLAGS}")

  set(strided_fatbin ${CMAKE_CURRENT_BINARY_DIR}/strided_copy_kernels.fatbin)
  set(strided_fatbin_c ${CMAKE_CURRENT_BINARY_DIR}/strided_copy_kernels.c)
  add_custom_command(OUTPUT ${strided_fatbin}
    COMMAND ${STRIDED_NVCC} ${nvcc_flags} ${gencode} ${extra_flags}
            -I${PROJECT_SOURCE_DIR}/src
            -o ${strided_fatbin} ${PROJECT_SOURCE_DIR}/src/copy/kernels.cu
    DEPENDS ${PROJECT_SOURCE_DIR}/src/copy/kernels.cu
            ${PROJECT_SOURCE_DIR}/src/copy/kernels.h
    COMMENT "nvcc: CUDA copy kernels for ${STRIDED_CUDA_ARCHITECTURES}"
    VERBATIM)
  add_custom_command(OUTPUT ${strided_fatbin_c}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${strided_fatbin} -DOUTPUT=${strided_fatbin_c}
            -DNAME=strided__copy_fatbin -DHEADER=copy/kernels.h
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_binary.cmake
    DEPENDS ${strided_fatbin} ${PROJECT_SOURCE_DIR}/cmake/embed_binary.cmake
    COMMENT "Embedding the CUDA copy kernels"
    VERBATIM)
  set(strided_kernel_sources ${strided_fatbin_c})
  set_source_files_properties(src/copy/launch.c PROPERTIES
    COMPILE_DEFINITIONS STRIDED_HAVE_KERNELS)
  # What strided_build_info_init reports (src/base/build.c).
  string(REPLACE ";" " " archs_text "${STRIDED_CUDA_ARCHITECTURES}")
  set_property(SOURCE src/base/build.c APPEND PROPERTY COMPILE_DEFINITIONS
    STRIDED_HAVE_KERNELS STRIDED_KERNEL_ARCHITECTURES="${archs_text}"
    STRIDED_KERNEL_PTX="${newest}" STRIDED_KERNEL_NVCC="${nvcc_version}")
  if("--compress-mode=size" IN_LIST nvcc_flags)
    set_property(SOURCE src/base/build.c APPEND PROPERTY COMPILE_DEFINITIONS
      STRIDED_KERNEL_COMPRESSED)
  endif()
  message(STATUS "strided: CUDA copy kernels: nvcc ${nvcc_version} (${STRIDED_NVCC}), "
                 "sm ${STRIDED_CUDA_ARCHITECTURES} + PTX ${newest}")
else()
  message(STATUS "strided: CUDA copy kernels: not built (no nvcc, or "
                 "STRIDED_BUILD_KERNELS=OFF); device copies will report STRIDED_ERR_UNSUPPORTED")
endif()
