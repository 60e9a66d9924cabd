/* uprobe_lib.c - the shared library uprobe_target calls: .library() probes (qa/30x). */
int ulib_square(int x);

int ulib_square(int x)
{
	return x * x;
}
