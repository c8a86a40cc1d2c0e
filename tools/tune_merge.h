/*
 * ucoll_tune --merge: the tuning files of several jobs into one, keeping
 * what more than half of them chose (tune_merge.c).
 */
#ifndef UCOLL_TUNE_MERGE_H
#define UCOLL_TUNE_MERGE_H

/* Merges files[0..nf-1] into a new file out; 0, or an exit status. */
int ucoll_tune_merge(int nf, char **files, const char *out);

#endif
