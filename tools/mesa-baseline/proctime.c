/* Times whole compiler processes with as little overhead of its own as it can.
 *
 *     proctime ROUNDS < JOBS > TIMES.tsv
 *
 * JOBS has one process per line, fields separated by tabs: environment
 * assignments (NAME=VALUE, added to proctime's own environment), then a
 * field `--`, then the argument vector (the program as a path, not looked
 * up in PATH). Every round runs every job once, in file order, so a change
 * of machine load spreads over all jobs alike. Each process is started with
 * posix_spawn, its standard input, output and error on /dev/null (nobody
 * reads what it prints), and reaped with wait4, whose resource usage is the
 * child's own CPU time at microsecond resolution. Wall time runs from just
 * before the spawn to just after the reap, on CLOCK_MONOTONIC.
 *
 * Output: one line per job, in file order, tab-separated: the job's index,
 * the exit status of its first run (or 128 + signal), then over the rounds
 * the median wall milliseconds, the median CPU (user + system) milliseconds,
 * the median minor page faults, and the minimum wall milliseconds.
 *
 * Build: cc -O2 -o proctime proctime.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct job {
    char **argv;
    char **envp;
    int status;
    double *wall, *cpu, *faults;
};

static void die(const char *what) {
    perror(what);
    exit(2);
}

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p)
        die("calloc");
    return p;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, compare);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Splits a line at tabs into the environment (proctime's own plus the
 * assignments before `--`) and the argument vector after it. */
static void parse(char *line, struct job *job, int rounds) {
    size_t own = 0;
    while (environ[own])
        own++;
    size_t fields = 1;
    for (char *c = line; *c; c++)
        fields += *c == '\t';
    job->envp = xcalloc(own + fields + 1, sizeof(char *));
    job->argv = xcalloc(fields + 1, sizeof(char *));
    size_t env = 0, arg = 0;
    int in_argv = 0;
    for (char *field = strtok(line, "\t"); field; field = strtok(NULL, "\t")) {
        if (!in_argv && strcmp(field, "--") == 0)
            in_argv = 1;
        else if (in_argv)
            job->argv[arg++] = field;
        else
            job->envp[env++] = field;
    }
    if (!arg) {
        fprintf(stderr, "proctime: a job without `--` and a program\n");
        exit(2);
    }
    for (size_t i = 0; i < own; i++)
        job->envp[env++] = environ[i];
    job->wall = xcalloc(rounds, sizeof(double));
    job->cpu = xcalloc(rounds, sizeof(double));
    job->faults = xcalloc(rounds, sizeof(double));
}

int main(int argc, char **argv) {
    int rounds = argc == 2 ? atoi(argv[1]) : 0;
    if (rounds < 1) {
        fprintf(stderr, "usage: proctime ROUNDS < JOBS > TIMES.tsv\n");
        return 2;
    }
    struct job *jobs = NULL;
    size_t count = 0, capacity = 0;
    char *line = NULL;
    size_t size = 0;
    ssize_t len;
    while ((len = getline(&line, &size, stdin)) > 0) {
        if (line[len - 1] == '\n')
            line[--len] = 0;
        if (!len)
            continue;
        if (count == capacity) {
            capacity = capacity ? 2 * capacity : 256;
            jobs = realloc(jobs, capacity * sizeof *jobs);
            if (!jobs)
                die("realloc");
        }
        parse(strdup(line), &jobs[count++], rounds);
    }

    posix_spawn_file_actions_t quiet;
    posix_spawn_file_actions_init(&quiet);
    for (int fd = 0; fd < 3; fd++)
        posix_spawn_file_actions_addopen(&quiet, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);

    for (int round = 0; round < rounds; round++) {
        for (size_t j = 0; j < count; j++) {
            struct job *job = &jobs[j];
            struct rusage usage;
            int status;
            pid_t pid;
            double start = now_ms();
            int err = posix_spawn(&pid, job->argv[0], &quiet, NULL, job->argv, job->envp);
            if (err) {
                errno = err;
                die(job->argv[0]);
            }
            if (wait4(pid, &status, 0, &usage) != pid)
                die("wait4");
            job->wall[round] = now_ms() - start;
            job->cpu[round] = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
                              (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
            job->faults[round] = usage.ru_minflt;
            if (round == 0)
                job->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
    }

    for (size_t j = 0; j < count; j++) {
        struct job *job = &jobs[j];
        double fastest = job->wall[0];
        for (int r = 1; r < rounds; r++)
            fastest = job->wall[r] < fastest ? job->wall[r] : fastest;
        printf("%zu\t%d\t%.3f\t%.3f\t%.0f\t%.3f\n", j, job->status, median(job->wall, rounds),
               median(job->cpu, rounds), median(job->faults, rounds), fastest);
    }
    return 0;
}
