/*
 * domain.h - pmdastap's performance metrics domain.
 *
 * From PCP's range for local agents (385-510 in stdpmid); 412 is unused by
 * every PMDA in PCP's stdpmid.  Install substitutes it for STAP in pmns
 * and help; pmcd.conf's -d can override it.
 */
#define STAP 412
