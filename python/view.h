/*
 * view.h: what the files of strided.StridedMemoryView share:
 * view_type.c (the type, its properties, from_buffer, view() and lifetime),
 * view_import.c (from_dlpack, the array interfaces, from_any_interface, the
 * torch fast path), view_export.c (__dlpack__, __dlpack_device__ and the
 * two interface dicts), dlpack_exchange.c (the DLPack C exchange API) and
 * view_copy.c (copy_from, copy_to).
 *
 * A view object holds one strided_view (and with it one reference to the C
 * buffer), the Python object that exported the memory, and what it has
 * memoised: the StridedLayout object (the one given to from_buffer, so that
 * view.layout is layout), the numpy dtype, and the Buffer that view() works
 * on. Every rule (ranges, devices, streams, element types) is the C
 * library's; these files convert, call and keep objects alive.
 *
 * Ownership: an imported DLPack tensor belongs to the view's C buffer from
 * the moment strided_view_import_dlpack_checked is called (its deleter runs
 * once, when the last view, derived view, wrapper Buffer or exported tensor
 * lets go); the consumed capsule is renamed and loses its destructor. An
 * interface or torch import wraps the producer's memory with a release
 * callback that holds a reference to the exporting object (for an
 * interface, to it and the dict, which may own the memory: NumPy scalars'
 * does), dropped once, when the memory's last holder lets go. An exported tensor holds its own
 * reference to the C buffer, not to the view object.
 *
 * Where the C buffer's release holds a Python object (an interface or torch
 * import's exporting object; a Buffer's owner or Python memory resource),
 * the view joins the memory's hold (hold.c), through which the garbage
 * collector learns of that reference. An exported tensor still alive holds
 * the C buffer where the collector cannot see, so a cycle through the
 * memory is kept until the tensor goes.
 */
#ifndef STRIDED_PY_VIEW_H
#define STRIDED_PY_VIEW_H

#include "strided_py.h"

typedef struct {
    PyObject_HEAD
    strided_view view;       /* one buffer reference; buffer NULL when unset */
    PyObject *exporting_obj; /* the producer, or the Buffer */
    PyObject *layout;        /* StridedLayout: given or memoised; or NULL */
    PyObject *base;          /* the Buffer view() works on; or NULL */
    PyObject *dtype;         /* numpy dtype: given or memoised; or NULL */
    PyObject *hold;          /* the memory's hold (hold.c), joined; or NULL
                              * when the C buffer holds no Python object or
                              * hidden stands in for it */
    PyObject *hidden;        /* borrowed: the object the C buffer's release
                              * holds, which the view reports itself while
                              * it is the buffer's only holder, until
                              * strided_py_view_hold makes the hold; or NULL */
    PyObject *weakrefs;
} strided_py_view;

/* The StridedMemoryView type. */
extern PyTypeObject strided_py_view_type;

/* A new view object taking v (its buffer reference); the object fields are
 * new references. On failure v is released and NULL returned. */
strided_py_view *strided_py_view_new(strided_view *v, PyObject *exporting_obj, PyObject *layout,
                                     PyObject *base, PyObject *dtype);

/* self (may be NULL), counted in hold (may be NULL), the hold of the memory
 * its buffer reference is to: a view of a Buffer, or another view of the
 * same C buffer, shares that object's hold. Returns self. */
strided_py_view *strided_py_view_joined(strided_py_view *self, PyObject *hold);

/* self (may be NULL) joined to hold, a new hold made for it (taken; NULL
 * when making it failed): self as a new reference, or NULL with self
 * dropped. */
PyObject *strided_py_view_joined_new(strided_py_view *self, PyObject *hold);

/* self (may be NULL) as the only holder of a C buffer whose release holds
 * hidden, a Python object: the view reports that reference to the garbage
 * collector itself while no other object holds the buffer, and makes the
 * hold when one is to share it (strided_py_view_hold). An import costs no
 * hold object so. Returns self. */
PyObject *strided_py_view_hiding(strided_py_view *self, PyObject *hidden);

/* The hold of the view's memory, for another object that takes a reference
 * to its C buffer to join (borrowed; NULL when the C buffer holds no
 * Python object), made now for a view that has reported the reference
 * itself. -1 with an exception when making it failed. */
int strided_py_view_hold(strided_py_view *self, PyObject **out);

/* The view's numpy dtype (borrowed, memoised), or NULL without an exception
 * for a view that has none, or NULL with one. */
PyObject *strided_py_view_dtype(strided_py_view *self);

/* A tuple of n ints, each v[i] * scale. New reference. */
PyObject *strided_py_int64_tuple(int n, const int64_t *v, int64_t scale);

/* view_ipc.c: sharing a view with another process. */
PyObject *strided_py_view_get_ipc_descriptor(strided_py_view *self, PyObject *const *args,
                                             Py_ssize_t nargs, PyObject *kwnames);
PyObject *strided_py_view_from_ipc_descriptor(PyObject *cls, PyObject *const *args,
                                              Py_ssize_t nargs, PyObject *kwnames);
PyObject *strided_py_view_reduce(strided_py_view *self, PyObject *unused);

/* view_import.c: the class methods that make views of other objects, and
 * the deprecated constructor. */
PyObject *strided_py_view_from_dlpack(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames);
PyObject *strided_py_view_from_array_interface(PyObject *cls, PyObject *obj);
PyObject *strided_py_view_from_cai(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames);
PyObject *strided_py_view_from_any(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames);
PyObject *strided_py_view_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwargs);
/* The exchange protocols from_any_interface takes, in the order it tries
 * them. */
enum {
    STRIDED_PY_PROTOCOL_CAI = 0,    /* __cuda_array_interface__ */
    STRIDED_PY_PROTOCOL_DLPACK = 1, /* __dlpack__ and __dlpack_device__ */
    STRIDED_PY_PROTOCOL_ARRAY = 2   /* __array_interface__ (host memory) */
};
/* The exchange protocol obj speaks, the first of DLPack, the CUDA Array
 * Interface and the array interface it has (an STRIDED_PY_PROTOCOL_...); -1
 * with BufferError when none, or another exception. */
int strided_py_exchange_protocol(PyObject *obj);
/* StridedMemoryView._exchange_protocol(obj): "dlpack", "cai" or "array",
 * the protocol from_any_interface takes for obj (the decorator's proxies
 * ask it). */
PyObject *strided_py_view_exchange_protocol(PyObject *cls, PyObject *obj);
/* Intern the names the imports call. -1 with an exception set. */
int strided_py_init_view_import(void);

/* view_export.c. The two exports of the exchange API below check the
 * element type as __dlpack__ does; -1 with an exception set (BufferError
 * for a view that cannot be exported). */
int strided_py_view_export_versioned(strided_py_view *self,
                                     strided_dl_managed_tensor_versioned **out);
int strided_py_view_export_dl_tensor(strided_py_view *self, strided_dl_tensor *out);
PyObject *strided_py_view_dunder_dlpack(strided_py_view *self, PyObject *const *args,
                                        Py_ssize_t nargs, PyObject *kwnames);
PyObject *strided_py_view_dunder_dlpack_device(strided_py_view *self, PyObject *unused);
PyObject *strided_py_view_array_interface(strided_py_view *self, void *closure);
PyObject *strided_py_view_cuda_array_interface(strided_py_view *self, void *closure);

/* dlpack_exchange.c: set the DLPack C exchange API capsule as type's
 * __dlpack_c_exchange_api__ and __c_dlpack_exchange_api__. -1 with an
 * exception set. */
int strided_py_add_dlpack_exchange_api(PyTypeObject *type);

/* view_copy.c */
PyObject *strided_py_view_copy_from(strided_py_view *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames);
PyObject *strided_py_view_copy_to(strided_py_view *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames);

#endif
