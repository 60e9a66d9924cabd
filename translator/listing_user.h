/* listing_user.h - pmstap -L: the target variables of user-space probe points. */
#ifndef PMSTAP_LISTING_USER_H
#define PMSTAP_LISTING_USER_H

#include "program.h"

/* Push DP's target variables onto OUT as "$name:type" (DP: a process(..) probe). */
void listing_user_vars(const struct derived_probe *dp, struct vec *out);

#endif
