#!/usr/bin/env python3
"""gen-tapset-tests.py - write the semok cases that check the probe tapsets' doc blocks.

Usage: mk/gen-tapset-tests.py   (from anywhere; writes qa/translator/semok/tapset-*.stp)

For each tapset file (or group of files) below, one case holds a probe on
every alias the files define, printing every variable the alias's doc block
lists (@name: lines), so pass 2 must resolve each of them against this
kernel: a variable that is documented but not set, or set from a $field the
tracepoint lacks, fails the case.  Aliases whose points all match nothing on
this machine are probed with '?'.  Run it again after changing an alias or
its doc block, and read the diff.
"""

import os
import re

CASES = [
    ("tapset-scheduler.stp", "tapset/scheduler.stp", ["scheduler.stp"]),
    ("tapset-kprocess.stp", "tapset/kprocess.stp", ["kprocess.stp"]),
    ("tapset-signal.stp", "tapset/signal.stp", ["signal.stp"]),
    ("tapset-ioblock.stp", "tapset/ioblock.stp", ["ioblock.stp"]),
    ("tapset-vfs.stp", "tapset/vfs.stp", ["vfs.stp"]),
    ("tapset-memory.stp", "tapset/memory.stp", ["memory.stp"]),
    ("tapset-irq.stp", "tapset/irq.stp", ["irq.stp"]),
    ("tapset-networking.stp", "tapset/networking.stp", ["networking.stp"]),
    ("tapset-socket.stp", "tapset/socket.stp", ["socket.stp"]),
    ("tapset-syscalls-hand.stp", "the hand-written syscall tapset files",
     ["syscalls_fs.stp", "syscalls_path.stp", "syscalls_proc.stp", "syscalls_net.stp"]),
    ("tapset-syscalls-gen.stp", "the generated syscall tapset files", ["syscalls_gen_*"]),
]

# Aliases that match nothing on x86_64 Linux 6.18.
ABSENT = {
    "syscall.send", "syscall.send.return", "syscall.recv", "syscall.recv.return",
    "ioblock_trace.bounce", "workqueue.create", "workqueue.destroy",
    "vm.write_shared_copy", "netdev.change_rx_flag",
    "socket.aio_write", "socket.aio_write.return", "socket.aio_read", "socket.aio_read.return",
    "socket.writev", "socket.writev.return", "socket.readv", "socket.readv.return",
}

DOC_ALIAS = re.compile(r"/\*\*((?:(?!/\*\*).)*?)\*/\s*\nprobe ([A-Za-z0-9_.]+) =", re.S)


def documented_aliases(path):
    """(alias name, [documented variables]) of the public aliases in PATH."""
    with open(path) as f:
        text = f.read()
    out = []
    for m in DOC_ALIAS.finditer(text):
        doc, name = m.group(1), m.group(2)
        if name.startswith("__") or "." not in name:
            continue
        names = []
        for v in re.findall(r"@([A-Za-z_][A-Za-z0-9_]*):", doc):
            if v not in names:
                names.append(v)
        if name.startswith("syscall."):
            base = ["name", "retval", "retstr"] if name.endswith(".return") else ["name", "argstr"]
            names = base + [v for v in names if v not in base]
        out.append((name, names))
    return out


def probe_line(name, names):
    opt = " ?" if name in ABSENT else ""
    note = "\t// matches nothing on x86_64 Linux 6.18" if opt else ""
    body = "println(%s)" % ", ".join(names) if names else "next"
    return "probe %s%s { %s }%s" % (name, opt, body, note)


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    tapset = os.path.join(root, "tapset")
    for case, what, patterns in CASES:
        files = []
        for p in patterns:
            if p.endswith("*"):
                files += sorted(f for f in os.listdir(tapset) if f.startswith(p[:-1]))
            else:
                files.append(p)
        lines = [
            "// %s" % case,
            "// Every alias of %s, each printing every variable its doc block lists:" % what,
            "// pass 2 must resolve them all against this kernel (tracepoint fields and",
            "// BTF arguments; kernel.function $vars are checked by a later pass).",
            "// Written by mk/gen-tapset-tests.py.",
        ]
        for fn in files:
            lines += [probe_line(n, v) for n, v in documented_aliases(os.path.join(tapset, fn))]
        with open(os.path.join(root, "qa", "translator", "semok", case), "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
