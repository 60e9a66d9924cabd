/* errno.h in a module of the kernel runtime: the shared runtime headers include it. */
#include <linux/errno.h>
