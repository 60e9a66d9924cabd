/*
 * symbolize.h - names for code addresses, in user space.
 *
 * Kernel addresses through /proc/kallsyms (read once, sorted, searched by
 * bisection); user addresses of a process through libdwfl
 * (dwfl_linux_proc_report: its mappings, so ASLR and shared libraries are
 * handled), with ELF symbol tables where there is no DWARF.  A process's
 * report is cached by pid and dropped when the pid's executable changes
 * (exec) or the process is gone and a new one has its pid; an address
 * outside every known module reports the process again once (dlopen).
 *
 * Formats follow stap's: " 0xADDR : sym+0xOFF/0xSIZE [module]" (a
 * print_stack() line), "sym+0xOFF/0xSIZE [module]" (symdata()), "sym"
 * (symname(); "0xADDR" when unknown), "/path/file.c:LINE" (symfileline();
 * "0xADDR" when unknown), the module alone (modname(); "" when unknown).
 * The kernel's module is "kernel",
 * a kernel module's its name; a process's, the file's path.
 */
#ifndef STP_SYMBOLIZE_H
#define STP_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stp_sym;

struct stp_sym_info {
	const char *name;	/* the symbol (valid until the next lookup) */
	uint64_t offset;	/* of the address into the symbol */
	uint64_t size;		/* the symbol's size; 0 when unknown */
	const char *module;	/* "kernel", a kernel module's name, or a file's path */
};

struct stp_sym *stp_sym__new(void);
void stp_sym__free(struct stp_sym *sym);

/* Use FILE instead of /proc/kallsyms (tests). */
void stp_sym__set_kallsyms(struct stp_sym *sym, const char *file);

/* The symbol at ADDR: of the kernel when PID is 0, else of process PID.  False: none known. */
bool stp_sym__lookup(struct stp_sym *sym, int pid, uint64_t addr, struct stp_sym_info *info);

/* Forget what is cached about process PID (it exited or exec'd). */
void stp_sym__forget(struct stp_sym *sym, int pid);

/* The styles of stp_sym__format(): STP_SYM_NAME, STP_SYM_DATA (stp_tapset.h), or: */
#ifndef STP_SYM_FULL	/* also in stp_tapset.h: sprint_syms() */
#define STP_SYM_FULL 3		/* " 0xADDR : sym+0xOFF/0xSIZE [module]\n" */
#endif

/* ADDR in STYLE into BUF (LEN bytes, NUL-terminated); returns the length it wrote. */
size_t stp_sym__format(struct stp_sym *sym, int pid, uint64_t addr, int style, char *buf,
		       size_t len);

/*
 * Every address of STK ("0x.. 0x..", as backtrace() gives them) in STYLE
 * into BUF: STP_SYM_FULL lines, else one per line (STP_SYM_LINES) or
 * separated by spaces.  Returns the length.
 */
size_t stp_sym__format_stack(struct stp_sym *sym, int pid, const char *stk, int style, char *buf,
			     size_t len);

/*
 * Room for element N of ARR (a malloc'd array of *CAP elements of SIZE
 * bytes; FIRST when it is empty, else twice as many): ARR, or ARR moved;
 * NULL when memory runs out, ARR and *CAP left as they were.
 */
void *stp_grow(void *arr, size_t n, size_t *cap, size_t size, size_t first);

/*
 * The source file and line of kernel address ADDR, from the running
 * kernel's vmlinux DWARF where it is installed; STEXT is where _stext is
 * now (kallsyms).  False when unknown (symbolize_klines.c).
 */
bool stp_sym_kernel_line(uint64_t stext, uint64_t addr, const char **file, int *line);

/*
 * The length of the JIT-compiled BPF function that starts at ADDR (a
 * "[bpf]" symbol of /proc/kallsyms), 0 when unknown (symbolize_bpf.c).
 */
uint64_t stp_sym_bpf_len(uint64_t addr);

/*
 * The user addresses of processes that are gone, through the build ids
 * their stacks left in the script's stp_umaps map (symbolize_umaps.c):
 * use map FD (-1: none); FILE may be mapped by the processes probed (an
 * executable or library the script probes or runs); the symbol at ADDR of
 * process PID, false when none is known.
 */
void stp_sym_umaps_use(int fd);
void stp_sym_umaps_add_file(const char *file);
bool stp_sym_umaps_lookup(int pid, uint64_t addr, struct stp_sym_info *info);
/* The same for the source FILE and LINE of ADDR. */
bool stp_sym_umaps_line(int pid, uint64_t addr, const char **file, int *line);
/*
 * Without reading the map again (many stacks named at once, most of whose
 * frames no entry places): stp_sym_umaps_load() copies it; the process
 * whose entries in that copy place the most of ADDRS (N of them), -1 when
 * none; the symbol at ADDR of process PID in that copy.
 */
void stp_sym_umaps_load(void);
int stp_sym_umaps_pid(const uint64_t *addrs, int n);
bool stp_sym_umaps_name(int pid, uint64_t addr, struct stp_sym_info *info);

/*
 * Tell the symbolizer about script S as it is attached: its stp_umaps
 * map, the files it probes, its -c command (stack_print.c).
 */
struct stp_script;
void stp_sym_use_script(struct stp_script *s);

/* The runner's instance, made on first use (the tapset services and the record printer use it). */
struct stp_sym *stp_sym_default(void);

/*
 * Print an STP_REC_STACK record (stp_meta.h) with flags ID and PAYLOAD
 * (LEN bytes) into the script's output, symbolized (stack_print.c).
 * Returns 0, or -1 when the record is malformed.
 */
struct stp_script;
int stp_sym_print_record(struct stp_script *s, unsigned id, const char *payload, size_t len);

/*
 * A deferred string argument of a printf record (STP_REC_SYMS of
 * stp_meta.h) whose u16 length was N, at *P (before END): named into V,
 * which stays valid while the record is formatted; *P moves past it.
 * Returns 0, or -1 when it is malformed (stack_print.c).
 */
struct stp_value;
int stp_sym_read_deferred(const char **p, const char *end, uint16_t n, struct stp_value *v);

#endif
