"""What the Python benchmarks share: timing-loop calibration, the machine's
CPU, and plain-text or Markdown tables."""

import platform


def c_strides(shape):
    """The C-order strides, in elements, of shape."""
    strides, s = [], 1
    for e in reversed(shape):
        strides.append(s)
        s *= e
    return tuple(reversed(strides))


def calibrate(timer, min_time):
    """The number of calls that makes one timed round last min_time seconds."""
    number = 1
    while True:
        t = timer.timeit(number)
        if t >= min_time:
            return number
        # Aim 20% past the target; grow at most 100x per step so that one
        # disturbed short round cannot make the next one very long.
        grow = 1.2 * min_time / t if t > 0 else 100.0
        number = int(number * min(100.0, max(2.0, grow)))


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def render(rows, markdown):
    """rows (the first is the header) as a Markdown or aligned text table."""
    if markdown:
        lines = ["| " + " | ".join(rows[0]) + " |",
                 "|" + "|".join("---" for _ in rows[0]) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                     for r in rows)
