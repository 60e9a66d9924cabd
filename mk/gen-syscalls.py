#!/usr/bin/env python3
"""gen-syscalls.py - generate the syscall tapset's long tail and number table.

Usage: mk/gen-syscalls.py [--tracefs DIR] [--unistd FILE] [--tapset DIR]

Writes, under the tapset directory (default: tapset/ beside mk/):
  syscalls_gen_*.stp        syscall.NAME and syscall.NAME.return for every
                            syscalls:sys_enter_NAME tracepoint in DIR (default
                            /sys/kernel/tracing/events/syscalls) that the
                            hand-written syscalls_{fs,path,proc,net}.stp do
                            not name; the variables are the tracepoint's fields
  x86_64/syscall_table.stp  the syscall numbers of FILE (default: the
                            installed <asm/unistd_64.h>) and of the syscalls
                            newer than those headers, as the arrays that
                            syscall_name() and syscall_num() read
And runtime/user/syscall_nr_x86_64.h: the same numbers by tracepoint name
(newstat, umount), for the runtime's syscall dispatch (attach_syscall.c).

The output is kept in the repository: every alias names its tracepoint with
'?', so the tapset loads on kernels that lack some.  Run this again on a
newer kernel to pick up new syscalls, and read the diff.
"""

import argparse
import os
import re
import sys
import textwrap

# Hand-written aliases live in these files; the tracepoints they name are skipped.
HAND_FILES = ["syscalls_fs.stp", "syscalls_path.stp", "syscalls_proc.stp", "syscalls_net.stp"]

# Tracepoint name -> alias name, where stap's tapset names the syscall differently.
RENAME = {"newuname": "uname"}

# Alias name -> the tracepoints it covers, oldest first (one alias per syscall, as stap).
MERGE = {
    "eventfd": ["eventfd", "eventfd2"],
    "inotify_init": ["inotify_init", "inotify_init1"],
    "signalfd": ["signalfd", "signalfd4"],
}

# Syscalls that never return: no .return alias.
NO_RETURN = {"exit", "exit_group"}

# Syscalls returning addresses: retstr in hex.
HEX_RETURN = {"shmat"}

# Syscalls newer than Debian 12's headers: x86_64's own numbers and the
# asm-generic ones every architecture shares since 424.  Checked on Linux 6.18
# by calling each number with the syscall tracepoints on.
EXTRA_NUMBERS = {
    "uretprobe": 335, "uprobe": 336,
    "cachestat": 451, "fchmodat2": 452, "map_shadow_stack": 453, "futex_wake": 454,
    "futex_wait": 455, "futex_requeue": 456, "statmount": 457, "listmount": 458,
    "lsm_get_self_attr": 459, "lsm_set_self_attr": 460, "lsm_list_modules": 461,
    "mseal": 462, "setxattrat": 463, "getxattrat": 464, "listxattrat": 465,
    "removexattrat": 466, "open_tree_attr": 467, "file_getattr": 468, "file_setattr": 469,
}

# char * arguments that are NUL-terminated input strings; const char * ones that are not.
STRING_NAMES = {"filename", "dev_name", "dir_name", "type", "name"}
NOT_STRINGS = {"u_msg_ptr"}

# Typedefs of pointers.
POINTER_TYPES = {"cap_user_header_t", "cap_user_data_t"}

# Integer types by width and sign; the rest are 64-bit signed.
UNSIGNED32 = {"unsigned int", "unsigned", "u32", "__u32", "umode_t", "qid_t", "u8", "__u8"}
SIGNED32 = {"int", "pid_t", "uid_t", "gid_t", "key_t", "clockid_t", "mqd_t", "timer_t",
            "key_serial_t", "__s32", "rwf_t", "enum landlock_rule_type"}
UNSIGNED64 = {"unsigned long", "size_t", "u64", "__u64", "aio_context_t"}

# unsigned long arguments that are addresses.
ADDRESS_NAMES = {"start", "addr", "new_addr", "arg2"}

# Argument names that would hide a variable every syscall alias has.
RESERVED = {"name": "name_str", "argstr": "argstr_arg", "retval": "retval_arg"}

# kind -> (value expression, printf conversion, words for the doc block)
KINDS = {
    "str": ("user_string_quoted($%s)", "%s", "read from user memory and quoted"),
    "ptr": ("$%s", "%p", "a user address"),
    "mode": ("__uint32($%s)", "%#o", "in octal in argstr"),
    "u32": ("__uint32($%s)", "%u", None),
    "s32": ("__int32($%s)", "%d", None),
    "flags32": ("__uint32($%s)", "0x%x", "in hex in argstr"),
    "u64": ("$%s", "%u", None),
    "flags64": ("$%s", "0x%x", "in hex in argstr"),
    "addr": ("$%s", "%p", "an address"),
    "s64": ("$%s", "%d", None),
}

MAX_LINES_PER_FILE = 1450
WIDTH = 78  # of what follows "\targstr = "


def read_fields(tracefs, tp):
    """The (C type, name) of each argument of tracepoint TP, in order."""
    fields = []
    with open(os.path.join(tracefs, tp, "format")) as f:
        for line in f:
            m = re.match(r"\s*field:(.*?);\s*offset:\d+;\s*size:\d+;", line)
            if not m:
                continue
            decl = m.group(1).strip()
            name = re.search(r"(\w+)$", decl).group(1)
            if name.startswith("common_") or name == "__syscall_nr":
                continue
            fields.append((decl[: -len(name)].strip(), name))
    return fields


def hand_written(tapset):
    """The syscall tracepoint names the hand-written files use."""
    used = set()
    for fn in HAND_FILES:
        with open(os.path.join(tapset, fn)) as f:
            used.update(re.findall(r'syscalls:sys_(?:enter|exit)_(\w+)"', f.read()))
    return used


def classify(ctype, name):
    """How an argument is shown: a key of KINDS."""
    base = ctype.replace("const ", "").strip()
    if "*" in ctype or base in POINTER_TYPES:
        is_char = re.fullmatch(r"(const )?char \*", ctype) and name not in NOT_STRINGS
        if is_char and (ctype.startswith("const") or name in STRING_NAMES):
            return "str"
        return "ptr"
    flaggy = "flag" in name or "mask" in name
    if base == "umode_t":
        return "mode"
    if base in UNSIGNED32:
        return "flags32" if flaggy else "u32"
    if base in SIGNED32:
        return "flags32" if "flag" in name else "s32"
    if base in UNSIGNED64:
        if name in ADDRESS_NAMES:
            return "addr"
        return "flags64" if flaggy else "u64"
    return "s64"


def var_name(name, kind):
    name = name.lstrip("_")
    if kind == "ptr":
        return name + "_uaddr"
    return RESERVED.get(name, name)


def wrap(first, items, indent, close=""):
    """FIRST followed by ITEMS joined with ", ", wrapped at WIDTH under INDENT."""
    lines, cur = [], first
    for i, item in enumerate(items):
        piece = item + (", " if i < len(items) - 1 else close)
        if len((cur + piece.rstrip()).expandtabs(8)) > WIDTH and cur.strip() != first.strip():
            lines.append(cur.rstrip())
            cur = indent
        cur += piece
    lines.append(cur.rstrip())
    return lines


def sprintf_text(fmts, args):
    if not args:
        return ['""']
    if fmts == ["%s"]:
        return [args[0]]
    return wrap('sprintf("%s", ' % ", ".join(fmts), args, "\t\t ", ")")


def arguments(tps, fields_of):
    """{variable: (C type, field name, kind, in every tracepoint)} in argument order."""
    seen = {}
    for tp in tps:
        for ctype, name in fields_of[tp]:
            kind = classify(ctype, name)
            v = var_name(name, kind)
            if v not in seen:
                everywhere = all(name in [n for _, n in fields_of[t]] for t in tps)
                seen[v] = (ctype, name, kind, everywhere)
    return seen


def entry_doc(alias, tps, args):
    calls = " or ".join("%s(2)" % t for t in tps)
    out = ["/**", " * probe syscall.%s - %s entered" % (alias, calls)]
    for v, (ctype, name, kind, everywhere) in args.items():
        words = KINDS[kind][2]
        doc = " * @%s: the %s argument (%s)%s" % (v, name, ctype, ", " + words if words else "")
        if not everywhere:
            doc += ", 0 where the syscall has none"
        out.append(doc)
    if len(tps) > 1:
        out += [" *", " * Description: name is %s." % " or ".join('"%s"' % t for t in tps)]
    return out + [" */"]


def entry_alias(alias, tps, fields_of):
    """The text of syscall.ALIAS for tracepoints TPS (their fields may differ)."""
    args = arguments(tps, fields_of)
    out = entry_doc(alias, tps, args)
    points = ['kernel.trace("syscalls:sys_enter_%s") ?' % t for t in tps]
    out.append("probe syscall.%s = %s" % (alias, (",\n" + " " * (17 + len(alias))).join(points)))
    out.append("{")
    extra = None
    if len(tps) == 1:
        out.append('\tname = "%s"' % alias)
    else:
        # the newest variant is told apart by an argument the oldest lacks
        first_names = {n for _, n in fields_of[tps[0]]}
        extra = [n for _, n in fields_of[tps[-1]] if n not in first_names][0]
        out.append('\tname = @defined($%s) ? "%s" : "%s"' % (extra, tps[-1], tps[0]))
    fmts, names, base_fmts, base_names = [], [], [], []
    for v, (ctype, name, kind, everywhere) in args.items():
        expr = KINDS[kind][0] % name
        if not everywhere:
            expr = "@defined($%s) ? %s : %s" % (name, expr, '""' if kind == "str" else "0")
        out.append("\t%s = %s" % (v, expr))
        fmts.append(KINDS[kind][1])
        names.append(v)
        if everywhere:
            base_fmts.append(KINDS[kind][1])
            base_names.append(v)
    full = sprintf_text(fmts, names)
    if extra and len(base_names) < len(names):
        out.append("\targstr = @defined($%s)" % extra)
        out.append("\t\t ? " + "\n".join(full))
        out.append("\t\t : " + "\n".join(sprintf_text(base_fmts, base_names)))
    else:
        out.append("\targstr = " + "\n".join(full))
    return out + ["}"]


def return_alias(alias, tps):
    base = 2 if alias in HEX_RETURN else 1
    what = "; retstr is in hex" if base == 2 else ""
    out = []
    if len(tps) == 1:
        out.append("/** probe syscall.%s.return - %s(2) returns%s */" % (alias, tps[0], what))
        out.append('probe syscall.%s.return = kernel.trace("syscalls:sys_exit_%s") ?'
                   % (alias, tps[0]))
        out += ["{", '\tname = "%s"' % alias]
    else:
        for t in tps:
            out.append("/** probe __syscall.%s.return - %s(2) returns, for syscall.%s.return */"
                       % (t, t, alias))
            out.append('probe __syscall.%s.return = kernel.trace("syscalls:sys_exit_%s") ?'
                       % (t, t))
            out += ["{", '\tname = "%s"' % t, "}", ""]
        out.append("/** probe syscall.%s.return - %s return%s */"
                   % (alias, " and ".join("%s(2)" % t for t in tps), what))
        out.append("probe syscall.%s.return = %s"
                   % (alias, ", ".join("__syscall.%s.return ?" % t for t in tps)))
        out.append("{")
    out.append("\tretval = $ret")
    out.append("\tretstr = return_str(%d, retval)" % base)
    return out + ["}"]


def aliases(tracefs, tapset):
    """(alias name, [tracepoints]) for every syscall the hand-written files leave out."""
    tps = sorted(d[len("sys_enter_"):] for d in os.listdir(tracefs) if d.startswith("sys_enter_"))
    skip = hand_written(tapset)
    result = []
    for alias, group in MERGE.items():
        group = [t for t in group if t in tps and t not in skip]
        if group:
            result.append((alias, group))
    merged = {t for group in MERGE.values() for t in group}
    for t in tps:
        if t not in skip and t not in merged:
            result.append((RENAME.get(t, t), [t]))
    return sorted(result)


HEADER = """// %s - generated syscall aliases, %s to %s.
//
// Generated by mk/gen-syscalls.py from the syscalls:sys_enter_* tracepoints of
// Linux 6.18 on x86_64: do not edit; change the generator and run it again.
// Every alias names its tracepoint with '?', so a kernel without it still
// loads the rest.  The variables are the tracepoint's fields: strings
// (const char *) read from user memory and quoted, other pointers as
// NAME_uaddr; argstr lists them in order.  See syscalls.stp.
"""


def fit(lines):
    """LINES with those over 100 columns broken: doc comments wrapped, probe lines after '='."""
    out = []
    for line in lines:
        if len(line.expandtabs(8)) <= 100:
            out.append(line)
        elif line.startswith("/** ") and line.endswith(" */"):
            out += ["/**"] + [" * " + w for w in textwrap.wrap(line[4:-3], 92)] + [" */"]
        elif line.startswith(" * "):
            words = textwrap.wrap(line[3:], 94)
            out += [" * " + words[0]] + [" *   " + w for w in words[1:]]
        elif line.startswith("probe ") and " = " in line:
            head, tail = line.split(" = ", 1)
            out += [head + " =", "\t" + tail]
        else:
            out.append(line)
    return out


def split(chunks):
    """CHUNKS of (alias, lines) in groups of about equal size, none much over MAX_LINES_PER_FILE."""
    total = sum(len(text) for _, text in chunks)
    per_file = total // -(-total // MAX_LINES_PER_FILE) + max(len(t) for _, t in chunks)
    files, cur, n = [], [], 0
    for alias, text in chunks:
        if cur and n + len(text) > per_file:
            files.append(cur)
            cur, n = [], 0
        cur.append((alias, text))
        n += len(text)
    return files + [cur] if cur else files


def write_aliases(tracefs, tapset):
    fields_of = {}
    chunks = []
    for alias, tps in aliases(tracefs, tapset):
        for t in tps:
            fields_of[t] = read_fields(tracefs, "sys_enter_" + t)
        text = entry_alias(alias, tps, fields_of) + [""]
        if alias not in NO_RETURN:
            text += return_alias(alias, tps) + [""]
        chunks.append((alias, fit("\n".join(text).split("\n"))))
    files = split(chunks)
    for old in os.listdir(tapset):
        if old.startswith("syscalls_gen_") and old.endswith(".stp"):
            os.remove(os.path.join(tapset, old))
    for i, group in enumerate(files):
        name = "syscalls_gen_%d.stp" % (i + 1)
        with open(os.path.join(tapset, name), "w") as f:
            f.write(HEADER % (name, group[0][0], group[-1][0]))
            for alias, text in group:
                f.write("\n" + "\n".join(text).rstrip("\n") + "\n")
    return len(chunks), len(files)


def read_numbers(unistd):
    nums = {}
    with open(unistd) as f:
        for line in f:
            m = re.match(r"#define __NR_(\w+)\s+(\d+)", line)
            if m:
                nums[m.group(1)] = int(m.group(2))
    for name, nr in EXTRA_NUMBERS.items():
        nums.setdefault(name, nr)
    return nums


TABLE_HEADER = """// syscall_table.stp - x86_64's syscall numbers, for syscall_name() and
// syscall_num().
//
// Generated by mk/gen-syscalls.py from <asm/unistd_64.h> and the numbers of
// newer syscalls it knows: do not edit.  The names are the syscalls' own
// (stat, umount2), not their tracepoints' (newstat, umount).  The arrays are
// filled by begin probes that run before the script's own.

/** Syscall names by number, for syscall_name(). */
global __syscall_64_num2name[%d]

/** Syscall numbers by name, for syscall_num(). */
global __syscall_64_name2num[%d]
"""


def write_table(unistd, tapset):
    nums = read_numbers(unistd)
    size = 1
    while size < len(nums) + 16:
        size *= 2
    os.makedirs(os.path.join(tapset, "x86_64"), exist_ok=True)
    by_number = sorted(nums.items(), key=lambda kv: kv[1])
    with open(os.path.join(tapset, "x86_64", "syscall_table.stp"), "w") as f:
        f.write(TABLE_HEADER % (size, size))
        f.write("\nprobe begin(-1000)\n{\n")
        for name, nr in by_number:
            f.write('\t__syscall_64_num2name[%d] = "%s"\n' % (nr, name))
        f.write("}\n\nprobe begin(-1000)\n{\n")
        for name, nr in by_number:
            f.write('\t__syscall_64_name2num["%s"] = %d\n' % (name, nr))
        f.write("}\n")
    return len(nums)


# Syscall name -> its tracepoint's, where the entry point is named otherwise
# (syscall_64.tbl: "4 common stat sys_newstat").
TP_NAMES = {"stat": "newstat", "fstat": "newfstat", "lstat": "newlstat",
            "uname": "newuname", "umount2": "umount", "sendfile": "sendfile64"}

C_TABLE_HEADER = """/*
 * syscall_nr_x86_64.h - x86_64's syscall numbers by the name of their
 * syscalls:sys_enter_NAME/sys_exit_NAME tracepoints (newstat, not stat).
 *
 * Generated by mk/gen-syscalls.py from <asm/unistd_64.h> and the numbers of
 * newer syscalls it knows: do not edit.  attach_syscall.c includes it.
 */
static const struct stp_sc_number {
	const char *tp;		/* the tracepoint's NAME */
	int nr;
} stp_sc_numbers[] = {
"""


def write_c_table(unistd, runtime):
    nums = read_numbers(unistd)
    by_number = sorted(nums.items(), key=lambda kv: kv[1])
    with open(os.path.join(runtime, "user", "syscall_nr_x86_64.h"), "w") as f:
        f.write(C_TABLE_HEADER)
        for name, nr in by_number:
            f.write('\t{ "%s", %d },\n' % (TP_NAMES.get(name, name), nr))
        f.write("};\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tracefs", default="/sys/kernel/tracing/events/syscalls")
    ap.add_argument("--unistd", default="/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
    ap.add_argument("--tapset", default=os.path.join(here, "..", "tapset"))
    a = ap.parse_args()
    n, files = write_aliases(a.tracefs, a.tapset)
    nums = write_table(a.unistd, a.tapset)
    write_c_table(a.unistd, os.path.join(here, "..", "runtime"))
    print("gen-syscalls: %d syscalls in %d files; %d syscall numbers" % (n, files, nums))
    return 0


if __name__ == "__main__":
    sys.exit(main())
