/*
 * ucoll_tune --merge: one tuning file from the files of several jobs.
 *
 * Where ranks outnumber processing units, one job's timings are not the
 * next one's (the scheduler places the ranks differently each time), so a
 * sweep's best can change with the job. Merging the sweeps of a few jobs
 * keeps, for each size, only the choice a majority of them made:
 *
 *   rules: grouped by operation and rank range (np=) as written. In each
 *   group the boundaries of every file's rules cut the sizes into
 *   intervals; at each interval every file votes with the rule the runtime
 *   would take there (its first matching one: algorithm and parameters,
 *   as written), or with "none" when none matches. A choice held by more
 *   than half of the files becomes the rule; where none is, no rule is
 *   written and the runtime's model decides, which a comment says.
 *   Neighbouring intervals with the same choice merge.
 *
 *   models: for "model" and "model.net", each file's last line of that kind
 *   (the one the runtime reads); each field the median of the files that
 *   have it, kept when more than half of the files with such a line do.
 *
 * The output is a new file (not appended to): the merged rules must not
 * come after older rules the runtime would match first.
 */
#include "tune_merge.h"

#include "algos/algos.h"
#include "core.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHOICE_LEN 160
#define KEY_LEN    64
#define N_FIELDS   5

typedef struct {
    int file;
    char key[2 * KEY_LEN + 2]; /* "op:np=a-b" (no np part when absent) */
    char op[KEY_LEN], np[KEY_LEN];
    size_t lo, hi;           /* [lo, hi), hi SIZE_MAX for inf */
    char choice[CHOICE_LEN]; /* ":@algo[:seg=..][:radix=..][:way=..][:stream=..]" */
} mrule_t;

typedef struct {
    double v[N_FIELDS];
    int has[N_FIELDS];
} mmodel_t;

static const char *const field_names[N_FIELDS] = {"alpha", "beta", "gamma", "lambda", "wake"};
static const char *const model_kinds[2] = {"model", "model.net"};

typedef struct {
    mrule_t *r;
    size_t n, cap;
    mmodel_t model[2];
    int has_model[2];
} mfile_t;

static int parse_bound(const char *s, size_t *v)
{
    if (s[0] == '\0' || !strcmp(s, "inf")) {
        *v = SIZE_MAX;
        return 0;
    }
    return ucoll__parse_size(s, v);
}

/* "op:lo-hi:field:..." into r; -1 when it does not parse as a rule. */
static int parse_rule(const char *w, mrule_t *r)
{
    char buf[512], *save = NULL, *f, *dash;
    int c;

    if (ucoll__tune_rule_check(w) != 0) {
        return -1; /* the runtime would ignore it */
    }
    snprintf(buf, sizeof(buf), "%s", w);
    memset(r, 0, sizeof(*r));
    f = strtok_r(buf, ":", &save);
    for (c = 0; c < UCOLL_COLL_LAST; c++) {
        if (f && !strcmp(f, ucoll__coll_name((ucoll_coll_t)c))) {
            break;
        }
    }
    if (c == UCOLL_COLL_LAST) {
        return -1;
    }
    snprintf(r->op, sizeof(r->op), "%s", f);
    f = strtok_r(NULL, ":", &save);
    if (f == NULL || (dash = strchr(f, '-')) == NULL) {
        return -1;
    }
    *dash = '\0';
    if (ucoll__parse_size(f, &r->lo) != 0 || parse_bound(dash + 1, &r->hi) != 0 || r->hi <= r->lo) {
        return -1;
    }
    while ((f = strtok_r(NULL, ":", &save)) != NULL) {
        size_t used = strlen(r->choice);

        if (!strncmp(f, "np=", 3)) {
            snprintf(r->np, sizeof(r->np), "%s", f);
        } else if ((f[0] == '@' || !strncmp(f, "seg=", 4) || !strncmp(f, "radix=", 6) ||
                    !strncmp(f, "way=", 4) || !strncmp(f, "stream=", 7)) &&
                   used + strlen(f) + 2 < sizeof(r->choice)) {
            snprintf(r->choice + used, sizeof(r->choice) - used, ":%s", f);
        } else {
            return -1;
        }
    }
    if (strstr(r->choice, ":@") != r->choice) {
        return -1; /* the algorithm first, as ucoll_tune writes it */
    }
    snprintf(r->key, sizeof(r->key), "%s%s%s", r->op, r->np[0] ? ":" : "", r->np);
    return 0;
}

/* "model[.net]:key=value:..." into the file's models; -1 when it does not
 * parse. */
static int parse_model(const char *w, mfile_t *mf)
{
    char buf[512], *save = NULL, *f;
    mmodel_t m = {{0}, {0}};
    int k;

    snprintf(buf, sizeof(buf), "%s", w);
    f = strtok_r(buf, ":", &save);
    if (f == NULL) {
        return -1;
    }
    for (k = 0; k < 2 && strcmp(f, model_kinds[k]); k++) {
    }
    if (k == 2) {
        return -1;
    }
    while ((f = strtok_r(NULL, ":", &save)) != NULL) {
        char *eq = strchr(f, '='), *end;
        int i;

        if (eq == NULL) {
            return -1;
        }
        *eq = '\0';
        for (i = 0; i < N_FIELDS && strcmp(f, field_names[i]); i++) {
        }
        if (i == N_FIELDS) {
            return -1;
        }
        m.v[i] = strtod(eq + 1, &end);
        if (*end != '\0' || !(m.v[i] >= 0 && m.v[i] < 1)) {
            return -1;
        }
        m.has[i] = 1;
    }
    mf->model[k] = m;
    mf->has_model[k] = 1;
    return 0;
}

static int load(const char *path, int idx, mfile_t *mf)
{
    char line[4096];
    FILE *f = fopen(path, "r");

    if (f == NULL) {
        perror(path);
        return -1;
    }
    for (int lineno = 1; fgets(line, sizeof(line), f); lineno++) {
        char *save = NULL, *hash = strchr(line, '#');

        if (hash) {
            *hash = '\0';
        }
        for (char *w = strtok_r(line, " \t\r\n;", &save); w;
             w = strtok_r(NULL, " \t\r\n;", &save)) {
            mrule_t r;

            if (!strncmp(w, "model", 5)) {
                if (parse_model(w, mf) != 0) {
                    fprintf(stderr, "%s:%d: cannot parse model '%s'\n", path, lineno, w);
                    fclose(f);
                    return -1;
                }
                continue;
            }
            if (parse_rule(w, &r) != 0) {
                fprintf(stderr, "%s:%d: cannot parse rule '%s'\n", path, lineno, w);
                fclose(f);
                return -1;
            }
            r.file = idx;
            if (mf->n == mf->cap) {
                size_t ncap = mf->cap ? 2 * mf->cap : 64;
                mrule_t *nr = realloc(mf->r, ncap * sizeof(*nr));

                if (nr == NULL) {
                    fclose(f);
                    return -1;
                }
                mf->r = nr;
                mf->cap = ncap;
            }
            mf->r[mf->n++] = r;
        }
    }
    fclose(f);
    return 0;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;

    return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The file's choice for a call of `bytes` in group `key`: its first
 * matching rule's, or NULL. */
static const char *vote(const mfile_t *mf, const char *key, size_t bytes)
{
    for (size_t i = 0; i < mf->n; i++) {
        const mrule_t *r = &mf->r[i];

        if (!strcmp(r->key, key) && bytes >= r->lo && bytes < r->hi) {
            return r->choice;
        }
    }
    return NULL;
}

/* The choice more than half of the files vote for at `bytes`, or NULL
 * (none, or "no rule" winning); *votes gets its count (0 when none wins). */
static const char *majority(const mfile_t *mf, int nf, const char *key, size_t bytes, int *votes)
{
    for (int i = 0; i < nf; i++) {
        const char *c = vote(&mf[i], key, bytes);
        int n = 0;

        for (int j = 0; j < nf; j++) {
            const char *d = vote(&mf[j], key, bytes);

            n += (c == NULL && d == NULL) || (c && d && !strcmp(c, d));
        }
        if (2 * n > nf) {
            *votes = n;
            return c;
        }
    }
    *votes = 0;
    return NULL;
}

static void print_size(FILE *f, size_t v)
{
    if (v == SIZE_MAX) {
        fprintf(f, "inf");
    } else {
        fprintf(f, "%zu", v);
    }
}

/* One group: its intervals, each with the majority's choice. */
static void merge_group(FILE *out, const mfile_t *mf, int nf, const char *key, const mrule_t *any)
{
    size_t nb = 0, cap = 2;
    size_t *b;

    for (int i = 0; i < nf; i++) {
        cap += 2 * mf[i].n;
    }
    b = malloc(cap * sizeof(*b));
    if (b == NULL) {
        return;
    }
    b[nb++] = 0;
    for (int i = 0; i < nf; i++) {
        for (size_t j = 0; j < mf[i].n; j++) {
            if (!strcmp(mf[i].r[j].key, key)) {
                b[nb++] = mf[i].r[j].lo;
                b[nb++] = mf[i].r[j].hi;
            }
        }
    }
    qsort(b, nb, sizeof(*b), cmp_size);
    {
        size_t u = 0;

        for (size_t i = 0; i < nb; i++) {
            if (b[i] != SIZE_MAX && (u == 0 || b[i] != b[u - 1])) {
                b[u++] = b[i];
            }
        }
        nb = u;
    }
    fprintf(out, "# %s: the choice of more than half of %d files\n", key, nf);
    for (size_t i = 0; i < nb;) {
        int votes, v2;
        const char *c = majority(mf, nf, key, b[i], &votes);
        size_t j = i + 1;

        while (j < nb) {
            const char *d = majority(mf, nf, key, b[j], &v2);

            if (!((c == NULL && d == NULL) || (c && d && !strcmp(c, d)))) {
                break;
            }
            j++;
        }
        if (c) {
            fprintf(out, "%s:%zu-", any->op, b[i]);
            print_size(out, j < nb ? b[j] : SIZE_MAX);
            fprintf(out, "%s%s%s\n", c, any->np[0] ? ":" : "", any->np);
        } else {
            fprintf(out, "#   %zu-", b[i]);
            print_size(out, j < nb ? b[j] : SIZE_MAX);
            fprintf(out, " B: %s, no rule (the model decides)\n",
                    votes ? "most files have no rule here" : "no choice of more than half");
        }
        i = j;
    }
    free(b);
}

static void merge_models(FILE *out, const mfile_t *mf, int nf)
{
    for (int k = 0; k < 2; k++) {
        int with = 0, printed = 0;
        double v[64];

        for (int i = 0; i < nf; i++) {
            with += mf[i].has_model[k];
        }
        if (with == 0) {
            continue;
        }
        for (int fi = 0; fi < N_FIELDS; fi++) {
            int n = 0;

            for (int i = 0; i < nf && n < 64; i++) {
                if (mf[i].has_model[k] && mf[i].model[k].has[fi]) {
                    v[n++] = mf[i].model[k].v[fi];
                }
            }
            if (2 * n <= with) {
                continue;
            }
            qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
            fprintf(out, "%s:%s=%.4g", printed ? "" : model_kinds[k], field_names[fi],
                    n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
            printed = 1;
        }
        if (printed) {
            fprintf(out, "\n");
        }
    }
}

int ucoll_tune_merge(int nf, char **files, const char *out_path)
{
    mfile_t *mf;
    FILE *out;
    int rc = 0;

    if (nf < 2 || nf > 64) {
        fprintf(stderr, "ucoll_tune --merge: 2 to 64 files\n");
        return 2;
    }
    mf = calloc((size_t)nf, sizeof(*mf));
    if (mf == NULL) {
        return 1;
    }
    for (int i = 0; i < nf && rc == 0; i++) {
        if (load(files[i], i, &mf[i]) != 0) {
            rc = 1;
        }
    }
    out = rc == 0 ? fopen(out_path, "w") : NULL;
    if (rc == 0 && out == NULL) {
        perror(out_path);
        rc = 1;
    }
    if (rc == 0) {
        fprintf(out, "# ucoll_tune --merge of %d files:", nf);
        for (int i = 0; i < nf; i++) {
            fprintf(out, " %s", files[i]);
        }
        fprintf(out, "\n");
        merge_models(out, mf, nf);
        /* each group once, in the order its first rule appears */
        for (int i = 0; i < nf; i++) {
            for (size_t j = 0; j < mf[i].n; j++) {
                const mrule_t *r = &mf[i].r[j];
                int seen = 0;

                for (int a = 0; a <= i && !seen; a++) {
                    for (size_t b = 0; b < (a == i ? j : mf[a].n) && !seen; b++) {
                        seen = !strcmp(mf[a].r[b].key, r->key);
                    }
                }
                if (!seen) {
                    merge_group(out, mf, nf, r->key, r);
                }
            }
        }
        if (fclose(out) != 0) {
            perror(out_path);
            rc = 1;
        }
    }
    for (int i = 0; i < nf; i++) {
        free(mf[i].r);
    }
    free(mf);
    return rc;
}
