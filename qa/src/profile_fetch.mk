# qa/src/profile_fetch.mk - profile_fetch, a PCP client fetching with an
# instance profile (qa/111).

QA_PROGRAMS += profile_fetch
profile_fetch_SRCS := qa/src/profile_fetch.c
profile_fetch_LDLIBS := -lpcp
