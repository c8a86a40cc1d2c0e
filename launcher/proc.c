/*
 * Starting ranks: program lookup, fork/exec with binding, and small process
 * helpers.
 */
#include "ucollrun.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_executable_file(const char *path)
{
    struct stat st;

    if (0 != stat(path, &st)) {
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        errno = EACCES;
        return false;
    }
    return 0 == access(path, X_OK);
}

char *ucr_find_program(const char *program)
{
    const char *path = getenv("PATH");
    char buf[PATH_MAX];
    int saved = ENOENT;

    if ('\0' == program[0]) {
        errno = ENOENT;
        return NULL;
    }
    if (NULL != strchr(program, '/')) {
        return is_executable_file(program) ? strdup(program) : NULL;
    }
    if (NULL == path) {
        path = "/usr/local/bin:/usr/bin:/bin";
    }
    while (*path) {
        const char *end = strchrnul(path, ':');
        size_t dlen = (size_t)(end - path);

        /* an empty entry means the current directory, as for execvp */
        if ((size_t)snprintf(buf, sizeof(buf), "%.*s%s%s", (int)dlen, path, dlen ? "/" : "",
                             program) < sizeof(buf)) {
            if (is_executable_file(buf)) {
                return strdup(buf);
            }
            if (ENOENT != errno && ENOTDIR != errno) {
                saved = errno;
            }
        }
        path = *end ? end + 1 : end;
    }
    errno = saved;
    return NULL;
}

/* Write a message from the child without stdio (async-signal-safe). */
static void child_say(const char *a, const char *b, const char *c)
{
    const char *parts[] = {UCR_NAME ": ", a, b, c, "\n"};

    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); ++i) {
        ucr_write_all(STDERR_FILENO, parts[i], strlen(parts[i]));
    }
}

pid_t ucr_spawn(const ucr_spawn_t *sp)
{
    sigset_t none;
    pid_t pid;

    pid = fork();
    if (pid < 0) {
        fprintf(stderr, UCR_NAME ": fork failed: %s\n", strerror(errno));
        return -1;
    }
    if (pid > 0) {
        setpgid(pid, pid); /* also done by the child; whichever runs first wins */
        return pid;
    }

    /* child: its own process group, so the launcher can signal it and
     * whatever it starts, and terminal signals reach only the launcher */
    setpgid(0, 0);
    if (dup2(sp->stdin_fd, STDIN_FILENO) < 0 || dup2(sp->out_fd, STDOUT_FILENO) < 0 ||
        dup2(sp->err_fd, STDERR_FILENO) < 0) {
        _exit(127);
    }
    /* the launcher ignores SIGPIPE and blocks the signals it reads through
     * a signalfd; exec keeps both, so undo them */
    signal(SIGPIPE, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (NULL != sp->topo && 0 != hwloc_set_cpubind(sp->topo, sp->cpuset, HWLOC_CPUBIND_PROCESS)) {
        child_say("warning: binding failed: ", strerrordesc_np(errno), "");
    }
    execve(sp->path, sp->argv, sp->env);
    child_say(sp->argv[0], ": ", strerrordesc_np(errno));
    _exit(127);
}

const char *ucr_signame(int sig, char *buf, size_t len)
{
    const char *abbrev = sigabbrev_np(sig);

    if (NULL != abbrev) {
        snprintf(buf, len, "SIG%s", abbrev);
    } else {
        snprintf(buf, len, "signal %d", sig);
    }
    return buf;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

void ucr_rmtree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
