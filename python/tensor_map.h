/*
 * tensor_map.h: StridedMemoryView.as_tensor_map (tensor_map.c), the one
 * entry of the view type's methods that makes tensor maps. The options, the
 * enumerations and TensorMapDescriptor itself are Python
 * (strided/_tensor_map.py); the rules are libstrided's
 * (strided/tensor_map.h).
 */
#ifndef STRIDED_PY_TENSOR_MAP_H
#define STRIDED_PY_TENSOR_MAP_H

#include "view.h"

/* view.as_tensor_map(box_dim=None, *, options=None, element_strides=None,
 * data_type=None, interleave=None, swizzle=None, l2_promotion=None,
 * oob_fill=None): a TensorMapDescriptor of self. */
PyObject *strided_py_view_as_tensor_map(strided_py_view *self, PyObject *const *args,
                                        Py_ssize_t nargs, PyObject *kwnames);

#endif
