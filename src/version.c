/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* version.c - the library's version at run time (cn_version). */
#include "internal.h"

unsigned int cn_version(void)
{
	return LIBCN_VERSION;
}
