/* consumer.c - a program outside the tree, built only with
 * `pkg-config --cflags --libs libcn` against an installed libcn. */
#include <libcn.h>
#include <stdio.h>

int main(void)
{
	union {
		struct cn_msg m;
		char b[64];
	} u;
	struct cn_msg *m = cn_msg_init(&u, sizeof(u), CN_IDX_PROC, CN_VAL_PROC, "x", 1);

	if (!m || m->len != 1 || m->id.idx != CN_IDX_PROC)
		return 1;
	printf("consumer: %s\n", cn_proc_what_name(CN_PROC_EXIT));
	return 0;
}
