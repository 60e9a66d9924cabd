/*
 * socketcall32 - a 32-bit (ia32) program with no libc: socketpair(),
 * send() and recv() through socketcall(2) (int $0x80, ia32's number
 * 102, SYS_SOCKETPAIR 8, SYS_SEND 9, SYS_RECV 10), as a 32-bit libc of
 * old made them.  Sends "hello" from one end, receives it at the other,
 * exits 0 when 5 bytes came back.  For qa/191: syscall.send and
 * syscall.recv on x86_64, where only 32-bit processes have them.
 * Built with -m32 -nostdlib -static (qa/src/socketcall32.mk).
 */
static long sys(long nr, long a, long b)
{
	long r;

	__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b) : "memory");
	return r;
}

void _start(void)
{
	int sv[2];
	char msg[8] = "hello", got[8];
	unsigned long pair[4] = { 1 /* AF_UNIX */, 1 /* SOCK_STREAM */, 0, (unsigned long)sv };
	unsigned long send[4], recv[4];
	long r = sys(102, 8, (long)pair);

	send[0] = sv[0], send[1] = (unsigned long)msg, send[2] = 5, send[3] = 0;
	recv[0] = sv[1], recv[1] = (unsigned long)got, recv[2] = sizeof(got), recv[3] = 0x40;
	if (r == 0)
		r = sys(102, 9, (long)send);
	if (r == 5)
		r = sys(102, 10, (long)recv);
	sys(1, r == 5 ? 0 : 1, 0);	/* exit */
}
