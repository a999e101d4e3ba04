/*
 * strided_py.h: what the extension's C files share. The extension only
 * converts Python objects to C values, calls libstrided, keeps Python
 * objects alive and maps its statuses to exceptions (errors.c); the rules
 * live in the C library, where its C tests reach them.
 *
 * Callbacks. libstrided runs release callbacks (a Buffer's owner, a Python
 * memory resource's deallocate) on whichever thread drops the last
 * reference, with or without the GIL. Each callback takes the GIL with
 * PyGILState_Ensure, unless strided_py_can_call_python() says Python is out
 * of reach; then it leaks what it holds rather than touch a dead
 * interpreter.
 */
#ifndef STRIDED_PY_H
#define STRIDED_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>

#include "strided.h"

/* Where a failed libstrided call was made, which decides its exception
 * (errors.c has the table). */
typedef enum {
    STRIDED_PY_CALL = 0,      /* any call: ValueError, OverflowError, ... */
    STRIDED_PY_DLPACK = 1,    /* the DLPack boundary: a tensor or request that
                                cannot be taken is a BufferError */
    STRIDED_PY_INTERFACE = 2, /* an array-interface or torch import: what
                                strided does not take is a BufferError */
    STRIDED_PY_IPC = 3        /* sharing with other processes: what cannot be
                                shared is a RuntimeError, as in cuda.core */
} strided_py_boundary;

/* Raise the exception for a failed libstrided call made where (the calling
 * thread's last error, without its operation) and return NULL. */
PyObject *strided_py_raise_at(strided_status status, strided_py_boundary where);

/* strided_py_raise_at(status, STRIDED_PY_CALL). */
PyObject *strided_py_raise(strided_status status);

/* Add the StridedLayout type (and its _StridedLayout alias) to the module. */
int strided_py_add_layout_type(PyObject *module);

/* The StridedLayout type (borrowed; static). */
PyTypeObject *strided_py_layout_type(void);

/* Copy the layout a StridedLayout object holds into *out. Returns 0, or -1
 * with TypeError for another object. */
int strided_py_layout_from(PyObject *obj, strided_layout *out);

/* A new StridedLayout object holding a copy of l, or NULL with an exception
 * set. */
PyObject *strided_py_layout_new(const strided_layout *l);

/* Add the StridedMemoryView type to the module. */
int strided_py_add_view_type(PyObject *module);

/* Add the Buffer type to the module. */
int strided_py_add_buffer_type(PyObject *module);

/* Add MemoryResource and the built-in resources to the module. */
int strided_py_add_resource_types(PyObject *module);

/* Whether the calling thread may take the GIL and touch Python objects:
 * always while the interpreter runs; during finalization only on the thread
 * that finalizes (it holds the GIL, and any other thread asking for it would
 * block for ever or be ended); never once it is finalized. */
bool strided_py_can_call_python(void);

/* Drop a reference to b. The GIL is released around the last release of
 * memory a resource frees, since that may wait for a stream (not otherwise:
 * the callbacks of wrapped memory take the GIL again at once), and kept
 * during finalization, so that the callbacks can still run on the
 * finalizing thread. A pending exception is
 * kept aside while the callbacks run and restored. Holds the GIL on entry
 * and on return; NULL is allowed. */
void strided_py_release_buffer(strided_buffer *b);

/* A new Buffer object taking the reference b. mr and owner (borrowed, may
 * be NULL) become its memory_resource and owner attributes. On failure b is
 * released and NULL returned. */
PyObject *strided_py_buffer_new(strided_buffer *b, PyObject *mr, PyObject *owner);

/* As strided_py_buffer_new, for a C buffer whose memory has a hold (see
 * below; NULL: none): the new Buffer joins it. */
PyObject *strided_py_buffer_new_held(strided_buffer *b, PyObject *mr, PyObject *owner,
                                     PyObject *hold);

/* The strided_buffer of an open Buffer object (borrowed), or NULL with
 * TypeError for another object, RuntimeError("Buffer has been closed") for
 * a closed Buffer. */
strided_buffer *strided_py_buffer_of(PyObject *obj);

/* A Buffer argument as an open strided.Buffer (new reference): obj itself,
 * or for any other object with an int handle, an int size and the
 * properties is_host_accessible and is_device_accessible (a cuda.core
 * Buffer) a new Buffer over the same memory, without a copy, whose owner is
 * obj: obj is kept alive while the memory is used and its memory is never
 * freed; its kind is what the CUDA driver says, as for
 * Buffer.from_handle(handle, size, owner=obj). NULL with TypeError ("Argument
 * '<what>' has incorrect type (...)") for an object without those
 * attributes, RuntimeError("Buffer has been closed") for a closed Buffer or
 * an object whose is_closed is true, or what reading the attributes
 * raised. */
PyObject *strided_py_buffer_arg(PyObject *obj, const char *what);

/* The hold of a Buffer's memory (borrowed), or NULL when it has none or is
 * closed. Assumes: obj is a Buffer (strided_py_buffer_of accepted it). */
PyObject *strided_py_buffer_hold(PyObject *obj);

/* The Buffer type (borrowed; static). */
PyTypeObject *strided_py_buffer_type(void);

/* cuda.core's TypeError sentence for stream=None where a stream is needed. */
extern const char strided_py_none_stream_message[];

/* Buffer.from_handle's body, making an object of type (Buffer, or
 * ManagedBuffer for its class method) from vectorcall arguments. */
PyObject *strided_py_buffer_from_handle(PyTypeObject *type, PyObject *const *args, Py_ssize_t nargs,
                                        PyObject *kwnames);

/* managed_type.c. ManagedBuffer, a Buffer subclass readied and added to
 * the module by strided_py_add_buffer_type. */
int strided_py_add_managed_buffer_type(PyObject *module);

/* The ManagedBuffer type (borrowed; static). */
PyTypeObject *strided_py_managed_buffer_type(void);

/* A new ManagedBuffer taking the reference b, allocated by mr (borrowed).
 * On failure b is released and NULL returned. */
PyObject *strided_py_managed_buffer_new(strided_buffer *b, PyObject *mr);

/* A location argument: None (type NONE), an int (a device ordinal; -1 the
 * host), an object with an int device_id (a cuda.core Device), an object
 * with numa_id and is_numa_current (a cuda.core Host: the host, a host NUMA
 * node, the calling thread's node), a type's name ("host", or
 * "host_numa_current"; a str or ManagedMemoryLocationType), or a pair
 * (name, id): ("device", 0), ("host", None), ("host_numa", 1),
 * ("host_numa_current", None). TypeError naming what for anything else,
 * ValueError for an unknown name or an id the type does not take. What each
 * operation accepts is libstrided's to check. */
int strided_py_as_location(PyObject *obj, const char *what, strided_memory_location *out);

/* A location as Python sees it (new reference): None, or (type, id) with
 * type a strided.ManagedMemoryLocationType ("host_numa_current", a str,
 * for the calling thread's node) and id None for the host. */
PyObject *strided_py_location_object(strided_memory_location loc);

/* A CopyOptions (strided's or cuda.core's: any object with its four
 * fields) as libstrided's: the enumerations by their str values (ValueError
 * "invalid src_access_order: 'x'" otherwise), the hints by
 * strided_py_as_location. */
int strided_py_as_copy_options(PyObject *obj, strided_buffer_copy_options *out);

/* hold.c. A hold tells the garbage collector of the reference a C buffer's
 * release holds to a Python object (an owner, an exporter, a Python memory
 * resource). Every Python object that holds its own reference to such a C
 * buffer joins the buffer's one hold, and leaves it just before dropping
 * that reference; the hold reports the object while they are the buffer's
 * only holders. */

/* Ready the hold type. -1 with an exception set. */
int strided_py_init_hold_type(void);

/* A new hold for b, whose release holds a reference to hidden (both
 * borrowed), with no holders yet. NULL with an exception set. */
PyObject *strided_py_hold_new(strided_buffer *b, PyObject *hidden);

/* A new hold for b, whose release holds a reference to the C buffer of the
 * hold inner (b imports a DLPack tensor a strided view exported): it joins
 * inner for that reference until it is freed, and reports inner as the
 * object b holds. NULL with an exception set. */
PyObject *strided_py_hold_new_chained(strided_buffer *b, PyObject *inner);

/* Count one more holder of hold (NULL is allowed and returned): a new
 * reference, which the holder keeps until strided_py_hold_leave. */
PyObject *strided_py_hold_join(PyObject *hold);

/* Count one holder less and drop its reference to hold (NULL is allowed).
 * Call it before the holder drops its reference to the C buffer. */
void strided_py_hold_leave(PyObject *hold);

/* strided._ipc's attribute name (new reference), or NULL with an
 * exception: the Python side of sharing with other processes. */
PyObject *strided_py_ipc_helper(const char *name);

/* The payload bytes (new reference) of descriptor, an instance of
 * strided._ipc's class cls, the argument named arg; NULL with TypeError
 * ("Argument 'ipc_descriptor' has incorrect type (expected
 * IPCBufferDescriptor, got int)") for anything else. */
PyObject *strided_py_ipc_payload(PyObject *descriptor, const char *cls, const char *arg);

/* The C resource behind a Python memory resource (a new reference): the
 * built-in resources' own, or for any other object a resource whose
 * deallocate calls obj.deallocate(ptr, size, stream=...) with the GIL held.
 * Its properties are obj's is_host_accessible, is_device_accessible,
 * is_managed (False when missing) and device_id (-1 when it raises), read
 * once, now. Returns -1 with an exception set on failure: TypeError naming
 * mr for an object without deallocate or one of the first two. */
int strided_py_resource_of(PyObject *obj, strided_memory_resource **out);

/* The C resource for copy temporaries from a Python memory resource (new
 * reference): the built-in resources' own, or a resource whose allocate
 * calls obj.allocate(size, stream=<stream>) and holds the result (a strided
 * or cuda.core Buffer: its handle is the address) until deallocate closes
 * it with close(<the deallocation stream>). stream is the copy's stream
 * object (borrowed; the resource keeps its own reference). Most resources
 * get it as given, and None or the int handle at close. cuda.core's
 * resources (an object whose class, or a class it derives from, comes from
 * the cuda.core package), whose methods take only a cuda.core Stream, get
 * cuda.core streams in both calls: stream itself when it is a cuda.core
 * Stream, else the Stream of the handle it stands for
 * (LEGACY_DEFAULT_STREAM for None, 0 and 1, PER_THREAD_DEFAULT_STREAM for
 * 2, Stream.from_handle otherwise; cuda.core is imported then, and an
 * ImportError is this call's failure). *calls_python says which kind of
 * resource was made. -1 with an exception set on failure: TypeError naming
 * what for an object without allocate, is_host_accessible or
 * is_device_accessible. */
int strided_py_allocating_resource_of(PyObject *obj, const char *what, PyObject *stream,
                                      strided_memory_resource **out, bool *calls_python);

/* The stream argument for a call into the Python memory resource resource
 * (its allocate, deallocate, close): stream itself (new reference) for
 * strided's and users' resources and for a cuda.core Stream; for the
 * objects of the cuda.core package, which take nothing else, the cuda.core
 * Stream for the stream stream names (None, an int, __cuda_stream__). NULL
 * with an exception set. */
PyObject *strided_py_resource_stream(PyObject *resource, PyObject *stream);

/* The first exception an allocating resource's allocate raised (new
 * reference, cleared there), or NULL. mr must be one made with
 * *calls_python true. */
PyObject *strided_py_allocating_error(strided_memory_resource *mr);

/* dtype.c. numpy.dtype(obj); new reference. */
PyObject *strided_py_np_dtype(PyObject *obj);

/* numpy.dtype(typestr) for an array interface's typestr (a str),
 * remembered per string. New reference. */
PyObject *strided_py_typestr_dtype(PyObject *typestr);

/* What libstrided makes of a numpy dtype (strided_dtype_from_numpy of its
 * str and name, with the facts below), remembered per dtype. -1 with an
 * exception set: TypeError for a dtype it refuses (object references). */
int strided_py_dtype_info(PyObject *dtype, strided_typestr *out);

/* The facts of a numpy dtype its type string does not show, as
 * strided_typestr_flags (hasobject: STRIDED_TYPESTR_HOLDS_REFERENCES;
 * fields: STRIDED_TYPESTR_STRUCTURED), and its itemsize (out_itemsize may
 * be NULL). -1 with an exception set. */
int strided_py_dtype_facts(PyObject *dtype, unsigned *out_flags, long *out_itemsize);

/* The numpy dtype of a DLPack type; new reference, cached per type. */
PyObject *strided_py_numpy_dtype_of(strided_dtype d);

/* Whether obj is a str that names a pair type of a sub-byte type
 * ("float4_e2m1fn_x2", which NumPy does not know; strided_dtype_parse):
 * 1 with *out set, else 0. Never raises. */
int strided_py_pair_dtype(PyObject *obj, strided_dtype *out);

/* A dtype argument: None gives *out_np NULL; anything else is normalised
 * with numpy.dtype (new reference) and *out_info says what it is
 * (strided_py_dtype_info). -1 with an exception set. */
int strided_py_as_dtype(PyObject *obj, PyObject **out_np, strided_typestr *out_info);

/* torch_view.c. A tensor read through its own accessors. */
typedef struct {
    void *ptr;             /* element (0,...,0): data_ptr() */
    strided_layout layout; /* shape, stride(), the dtype's size */
    strided_dtype dtype;
    strided_device device; /* CPU (0) or CUDA (index) */
} strided_py_torch_tensor;

/* Whether obj is a torch.Tensor or torch.nn.Parameter (exactly; subclasses
 * go by DLPack). False while torch is not imported. Never raises. */
bool strided_py_is_torch_tensor(PyObject *obj);

/* Read tensor t: 1 with *out set; 0 when the fast path does not apply (a
 * sparse or conjugated tensor, another device, a dtype without a DLPack
 * code, CUDA without torch._C._cuda_getCurrentRawStream): use DLPack; -1
 * with an exception set. */
int strided_py_torch_describe(PyObject *t, strided_py_torch_tensor *out);

/* torch's current CUDA stream on device (a CUstream). -1 with an
 * exception. */
int strided_py_torch_current_stream(int device, void **out);

#endif
