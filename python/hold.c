/*
 * hold.c: what the cyclic garbage collector is told of a C buffer's
 * reference to a Python object.
 *
 * A strided_buffer made here may hold a Python object through its release:
 * the owner of Buffer.from_handle(owner=...), the exporting object of an
 * array-interface or torch import (the release callback's context), or a
 * memory resource written in Python (the context of the C resource that
 * wraps it, which only that buffer holds). The collector cannot see that
 * reference, so a cycle through it (an owner that keeps a Buffer or a view
 * of its own memory, a resource that keeps the Buffers it allocated) would
 * never be collected.
 *
 * A hold stands for that reference. It is made with the C buffer, and every
 * Python object that holds a reference to the C buffer for itself (a Buffer,
 * a view) also holds the hold and is counted in it (join, leave). The hold
 * reports the hidden object to the collector, once, and only while every
 * reference to the C buffer is one of those counted. Then the reference
 * behaves as the collector assumes: it goes, with the memory, exactly when
 * the last of those objects goes, and those objects all report the hold, so
 * a cycle through the memory is garbage exactly when all of them are. Any
 * other holder (an exported DLPack tensor, a NumPy array that consumed one,
 * C code, a Python object made by another path) makes the reference
 * external: it is not reported, and a cycle through it stays, as it must,
 * since the memory is in use; the next collection after that holder lets
 * go finds it.
 *
 * A view imported from another producer (an array-interface, buffer or
 * torch import) is first the only holder of its C buffer, and reports the
 * hidden object itself, under the same rule (only while the buffer's count
 * is its own one reference), without a hold: most such views are made,
 * read and dropped, and a hold is a second object per import. When another
 * object is to share the buffer (a derived view, the view's Buffer, a
 * DLPack import of the view), the view makes the hold, joins it and stops
 * reporting (strided_py_view_hold in view_type.c); the sharer joins it.
 *
 * A view imported through DLPack from a strided view has a C buffer whose
 * release (the tensor's deleter) holds a reference to the exporting view's
 * C buffer. Its hold is chained: it joins the exporter's hold, which counts
 * that reference among its holders for as long as the chained hold lives,
 * and it reports the exporter's hold as its hidden object, under the same
 * rule. So the inner reference counts as collectable exactly when the outer
 * buffer is held only by counted objects.
 *
 * A hold holds no reference of its own but a chained hold's, which it
 * keeps until it is freed; the hidden one is the C buffer's. So it has
 * nothing to clear: a garbage cycle is broken by its other members (the
 * owner's attributes, the holders' own references), and the memory is
 * released when the last holder is freed, exactly once, by the C buffer's
 * count.
 *
 * Assumes: the GIL is held for every call here; the counted objects take
 * and drop their C references with the GIL held, so that only references
 * held elsewhere can change the buffer's count while the collector runs,
 * and those only ever lower it to the counted ones (then the hidden object
 * is reported as reachable, which keeps it: safe).
 */
#include "strided_py.h"

typedef struct {
    PyObject_HEAD
    strided_buffer *buf; /* borrowed: a holder's reference keeps it while
                          * holders > 0 */
    PyObject *hidden;    /* borrowed: the C buffer's reference; for a chained
                          * hold, inner */
    PyObject *inner;     /* a chained hold's: the hold it joined, or NULL */
    long holders;        /* objects holding one reference each to buf and
                          * to this hold */
} HoldObject;

static PyTypeObject HoldType;

PyObject *strided_py_hold_new(strided_buffer *b, PyObject *hidden)
{
    assert(b != NULL && hidden != NULL);
    HoldObject *self = PyObject_GC_New(HoldObject, &HoldType);
    if (self == NULL)
        return NULL;
    self->buf = b;
    self->hidden = hidden;
    self->inner = NULL;
    self->holders = 0;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

PyObject *strided_py_hold_new_chained(strided_buffer *b, PyObject *inner)
{
    assert(inner != NULL && Py_IS_TYPE(inner, &HoldType));
    HoldObject *self = (HoldObject *)strided_py_hold_new(b, inner);
    if (self != NULL)
        self->inner = strided_py_hold_join(inner);
    return (PyObject *)self;
}

PyObject *strided_py_hold_join(PyObject *hold)
{
    if (hold == NULL)
        return NULL;
    assert(Py_IS_TYPE(hold, &HoldType));
    ((HoldObject *)hold)->holders++;
    return Py_NewRef(hold);
}

void strided_py_hold_leave(PyObject *hold)
{
    if (hold == NULL)
        return;
    assert(Py_IS_TYPE(hold, &HoldType) && ((HoldObject *)hold)->holders > 0);
    ((HoldObject *)hold)->holders--;
    Py_DECREF(hold);
}

static int hold_traverse(HoldObject *self, visitproc visit, void *arg)
{
    if (self->holders > 0 && strided_buffer_use_count(self->buf) == self->holders)
        Py_VISIT(self->hidden);
    return 0;
}

/* A chained hold stops counting for its buffer's reference to the inner
 * one: that reference may outlive it (a tensor exported from the outer
 * memory), and is then external, as an uncounted holder should be. */
static void hold_dealloc(HoldObject *self)
{
    PyObject_GC_UnTrack(self);
    strided_py_hold_leave(self->inner);
    PyObject_GC_Del(self);
}

static PyTypeObject HoldType = {
    /* Kept as written: clang-format would join the next line to the macro. */
    /* clang-format off */
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "strided._MemoryHold",
    /* clang-format on */
    .tp_doc = "The reference a C buffer holds to the object behind its memory, as "
              "the garbage collector sees it. Internal.",
    .tp_basicsize = sizeof(HoldObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_dealloc = (destructor)hold_dealloc,
    .tp_traverse = (traverseproc)hold_traverse,
};

int strided_py_init_hold_type(void)
{
    return PyType_Ready(&HoldType);
}
