/*
 * retrylab's shim: preloaded (LD_PRELOAD) into every executor process the simulator starts,
 * so that the clocks and the entropy a program reads below its interpreter are the
 * simulator's (docs/executor-protocol.md, section 9; docs/your-executor.md, "Clocks and
 * entropy below the interpreter").
 *
 * - The virtual time is read from the protocol itself: every message the simulator sends
 *   carries `now_ms`, and the shim watches the bytes the process reads from its channel
 *   (fd RETRYLAB_FD_IN, 3), so that any executor speaking the protocol gets it, whatever its
 *   language, with no call into the shim. Until the first message, `now_ms` is 0.
 * - Clocks that are read: `clock_gettime` for every clock id (the wall clocks read
 *   2026-01-01T00:00:00Z + now_ms, the monotonic and boot clocks now_ms, the CPU-time clocks
 *   0: a handler's computation takes no virtual time), `gettimeofday`, `time`,
 *   `timespec_get`, `clock`, and the same through `syscall()`.
 * - Clocks that are given a deadline: the timed waits (condition variables, semaphores,
 *   mutexes, absolute `clock_nanosleep`, `timerfd`/`timer_settime` with an absolute time)
 *   get a deadline computed on the virtual clock; the shim turns it into the same remaining
 *   time on the real clock, so that a thread's timed wait (CPython's GIL, V8's workers)
 *   waits as long as it asked. A sleep of the protocol thread (the process's main thread)
 *   for a positive time is refused: the process exits with status 4 and says where the
 *   sleep came from (a handler sleeps through the protocol: the clients' `time.sleep`).
 * - Entropy: `getrandom`, `getentropy`, `arc4random*`, `syscall(SYS_getrandom)` and reads of
 *   `/dev/urandom` and `/dev/random` (open, openat, fopen) draw from a generator seeded at
 *   every `start` with its `seed` (a function of the run's seed, the worker and the
 *   incarnation), and with 0 before the first `start`.
 *
 * Not served (listed in the docs): a system call made without libc's wrappers (inline
 * assembly, a static binary), a vDSO page read directly, the CPU's own RDRAND, `times()` and
 * `getrusage()`.
 *
 * Only libc's async-signal-safe calls are used on the paths a signal handler may reach; no
 * allocation: the shim runs inside malloc's callers.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* The null checks below are the kernel's EFAULT, kept although glibc declares the pointers
 * non-null. */
#pragma GCC diagnostic ignored "-Wnonnull-compare"
/* A path cut at PATH_MAX fails its call with ENOENT, as the kernel's own limit would. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* 2026-01-01T00:00:00Z: the wall clock at now_ms 0 (the clients' EPOCH). */
#define EPOCH_S 1767225600LL
/* TAI is ahead of UTC by 37 s since 2017. */
#define TAI_OFFSET_S 37LL
/* The exit status of a strict-mode violation (the Python client's EXIT_STRICT_VIOLATION). */
#define EXIT_REFUSED 4

EXPORT const char retrylab_shim_version[] = "retrylab-shim 1";

/* ---- the kernel's entry, without libc's wrappers (which this shim replaces) ---- */

static long raw6(long n, long a, long b, long c, long d, long e, long f) {
    long r;
#if defined(__x86_64__)
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    r = x0;
#else
#error "retrylab's shim: Linux on x86-64 or aarch64"
#endif
    if (r < 0 && r > -4096) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

static long raw_n(long n, long a, long b, long c, long d) {
    return raw6(n, a, b, c, d, 0, 0);
}

/* ---- the virtual clock ---- */

static volatile int64_t now_ms = 0;
static int fd_in = 3;

static int64_t virtual_ns(clockid_t id, int *known) {
    int64_t ms = __atomic_load_n(&now_ms, __ATOMIC_ACQUIRE);
    *known = 1;
    switch (id) {
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_REALTIME_ALARM:
        return (EPOCH_S * 1000 + ms) * 1000000LL;
    case CLOCK_TAI:
        return ((EPOCH_S + TAI_OFFSET_S) * 1000 + ms) * 1000000LL;
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
    case CLOCK_BOOTTIME_ALARM:
        return ms * 1000000LL;
    case CLOCK_PROCESS_CPUTIME_ID:
    case CLOCK_THREAD_CPUTIME_ID:
        return 0;
    default:
        /* Negative ids: a process's or thread's CPU clock (clock_getcpuclockid), or a
         * dynamic clock of a device (the low bits 3: CLOCKFD), which stays real. */
        if (id < 0 && (id & 7) != 3)
            return 0;
        *known = 0;
        return 0;
    }
}

static void to_timespec(int64_t ns, struct timespec *tp) {
    tp->tv_sec = ns / 1000000000LL;
    tp->tv_nsec = ns % 1000000000LL;
}

static int64_t from_timespec(const struct timespec *tp) {
    return (int64_t)tp->tv_sec * 1000000000LL + tp->tv_nsec;
}

/* The real clock, without libc's (interposed) wrapper. */
static int64_t real_ns(clockid_t id) {
    struct timespec ts;
    if (raw_n(SYS_clock_gettime, id, (long)&ts, 0, 0) != 0)
        return 0;
    return from_timespec(&ts);
}

EXPORT int clock_gettime(clockid_t id, struct timespec *tp) {
    int known;
    int64_t ns = virtual_ns(id, &known);
    if (!known)
        return (int)raw_n(SYS_clock_gettime, id, (long)tp, 0, 0);
    if (tp == NULL) {
        errno = EFAULT;
        return -1;
    }
    to_timespec(ns, tp);
    return 0;
}

EXPORT int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    (void)tz;
    if (tv != NULL) {
        int known;
        int64_t ns = virtual_ns(CLOCK_REALTIME, &known);
        tv->tv_sec = ns / 1000000000LL;
        tv->tv_usec = (ns % 1000000000LL) / 1000;
    }
    return 0;
}

EXPORT time_t time(time_t *t) {
    int known;
    time_t s = (time_t)(virtual_ns(CLOCK_REALTIME, &known) / 1000000000LL);
    if (t != NULL)
        *t = s;
    return s;
}

EXPORT int timespec_get(struct timespec *ts, int base) {
    if (base != TIME_UTC)
        return 0;
    clock_gettime(CLOCK_REALTIME, ts);
    return base;
}

EXPORT clock_t clock(void) {
    return 0;
}

/* ---- refusals ---- */

static int is_main_thread(void) {
    return raw_n(SYS_gettid, 0, 0, 0, 0) == raw_n(SYS_getpid, 0, 0, 0, 0);
}

static void write_all(int fd, const char *s) {
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = raw_n(SYS_write, fd, (long)s, (long)n, 0);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void refuse_sleep(const char *what, int64_t ns) {
    char line[600];
    snprintf(line, sizeof line,
             "retrylab strict mode violation: %s for %lld ms below the interpreter, outside a "
             "tool call of a sync process (at import, in init or on_reset, between calls, or in "
             "an async process, whose event loop it would block): no protocol sleep can be sent "
             "there, and a real sleep would pass while virtual time stands still (sleep in the "
             "handler, or await asyncio.sleep); the executor exits with status 4\n",
             what, (long long)((ns + 999999) / 1000000));
    write_all(2, line);
    _exit(EXIT_REFUSED);
}

static int virtual_sleep(const char *what, int64_t ns);

/* ---- timed waits: a virtual deadline to the same remaining real time ---- */

/* The real deadline on clock `id` that leaves as long as `abs` (virtual, on `id`) does. */
static struct timespec real_deadline(clockid_t id, const struct timespec *abs) {
    int known;
    int64_t vnow = virtual_ns(id, &known);
    struct timespec out;
    if (!known) {
        out = *abs;
        return out;
    }
    int64_t left = from_timespec(abs) - vnow;
    if (left < 0)
        left = 0;
    to_timespec(real_ns(id) + left, &out);
    return out;
}

/* A deadline for a wait whose clock the caller chose when it made the object (a condition
 * variable's attribute): a wall-clock deadline is far above any monotonic reading the
 * simulator gives (now_ms of a run is far below 50 years). */
static clockid_t clock_of_deadline(const struct timespec *abs) {
    return abs->tv_sec > EPOCH_S / 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
}

#define REAL(ret, name, ...)                                                                   \
    static ret (*real_##name)(__VA_ARGS__);                                                    \
    static ret (*get_##name(void))(__VA_ARGS__) {                                              \
        if (real_##name == NULL)                                                               \
            real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name);                        \
        return real_##name;                                                                    \
    }

REAL(int, pthread_cond_timedwait, pthread_cond_t *, pthread_mutex_t *, const struct timespec *)
REAL(int, pthread_cond_clockwait, pthread_cond_t *, pthread_mutex_t *, clockid_t,
     const struct timespec *)
REAL(int, sem_timedwait, sem_t *, const struct timespec *)
REAL(int, sem_clockwait, sem_t *, clockid_t, const struct timespec *)
REAL(int, pthread_mutex_timedlock, pthread_mutex_t *, const struct timespec *)
REAL(int, pthread_mutex_clocklock, pthread_mutex_t *, clockid_t, const struct timespec *)
REAL(int, timerfd_settime, int, int, const struct itimerspec *, struct itimerspec *)
REAL(int, timer_settime, timer_t, int, const struct itimerspec *, struct itimerspec *)

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs) {
    struct timespec d = real_deadline(clock_of_deadline(abs), abs);
    return get_pthread_cond_timedwait()(c, m, &d);
}

EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t id,
                                  const struct timespec *abs) {
    struct timespec d = real_deadline(id, abs);
    return get_pthread_cond_clockwait()(c, m, id, &d);
}

/* The number of threads of this process (/proc/self/status), 0 if unknown. */
static int threads(void) {
    char buf[4096];
    int fd = (int)raw_n(SYS_openat, AT_FDCWD, (long)"/proc/self/status", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    ssize_t n = raw_n(SYS_read, fd, (long)buf, sizeof buf - 1, 0);
    raw_n(SYS_close, fd, 0, 0, 0);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *t = strstr(buf, "\nThreads:");
    return t != NULL ? atoi(t + 9) : 0;
}

/* A timed wait of the protocol thread on a lock that is taken, in a process with no other
 * thread: nothing can release it, so it can only time out. Served as a virtual sleep to its
 * deadline (returns 1: the caller then tries once more and times out); 0 for any other
 * wait, which waits on the real clock. */
static int lone_wait(const char *what, clockid_t id, const struct timespec *abs) {
    if (!is_main_thread() || threads() != 1)
        return 0;
    int known;
    int64_t left = from_timespec(abs) - virtual_ns(id, &known);
    if (!known)
        return 0;
    if (left > 0)
        virtual_sleep(what, left);
    return 1;
}

EXPORT int sem_timedwait(sem_t *s, const struct timespec *abs) {
    if (sem_trywait(s) == 0)
        return 0;
    if (lone_wait("sem_timedwait", CLOCK_REALTIME, abs)) {
        if (sem_trywait(s) == 0)
            return 0;
        errno = ETIMEDOUT;
        return -1;
    }
    struct timespec d = real_deadline(CLOCK_REALTIME, abs);
    return get_sem_timedwait()(s, &d);
}

EXPORT int sem_clockwait(sem_t *s, clockid_t id, const struct timespec *abs) {
    if (sem_trywait(s) == 0)
        return 0;
    if (lone_wait("a timed lock acquire (sem_clockwait)", id, abs)) {
        if (sem_trywait(s) == 0)
            return 0;
        errno = ETIMEDOUT;
        return -1;
    }
    struct timespec d = real_deadline(id, abs);
    return get_sem_clockwait()(s, id, &d);
}

EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs) {
    if (pthread_mutex_trylock(m) == 0)
        return 0;
    if (lone_wait("pthread_mutex_timedlock", CLOCK_REALTIME, abs))
        return pthread_mutex_trylock(m) == 0 ? 0 : ETIMEDOUT;
    struct timespec d = real_deadline(CLOCK_REALTIME, abs);
    return get_pthread_mutex_timedlock()(m, &d);
}

EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t id, const struct timespec *abs) {
    if (pthread_mutex_trylock(m) == 0)
        return 0;
    if (lone_wait("pthread_mutex_clocklock", id, abs))
        return pthread_mutex_trylock(m) == 0 ? 0 : ETIMEDOUT;
    struct timespec d = real_deadline(id, abs);
    return get_pthread_mutex_clocklock()(m, id, &d);
}

/* An absolute timer becomes a relative one of the same remaining time. */
static int relative_timer(clockid_t id, int *flags, int abs_flag, const struct itimerspec *in,
                          struct itimerspec *out) {
    *out = *in;
    if (!(*flags & abs_flag) || (in->it_value.tv_sec == 0 && in->it_value.tv_nsec == 0))
        return 0;
    int known;
    int64_t left = from_timespec(&in->it_value) - virtual_ns(id, &known);
    if (!known)
        return 0;
    if (left < 1)
        left = 1; /* already due: at once (0 would disarm it) */
    to_timespec(left, &out->it_value);
    *flags &= ~abs_flag;
    return 0;
}

/* timerfd's clock is the one it was made with; the deadline's size says which it is. */
EXPORT int timerfd_settime(int fd, int flags, const struct itimerspec *v, struct itimerspec *old) {
    struct itimerspec r;
    relative_timer(clock_of_deadline(&v->it_value), &flags, TFD_TIMER_ABSTIME, v, &r);
    return get_timerfd_settime()(fd, flags, &r, old);
}

EXPORT int timer_settime(timer_t t, int flags, const struct itimerspec *v, struct itimerspec *old) {
    struct itimerspec r;
    relative_timer(clock_of_deadline(&v->it_value), &flags, TIMER_ABSTIME, v, &r);
    return get_timer_settime()(t, flags, &r, old);
}

/* ---- sleeps ---- */

static int real_sleep(const struct timespec *req, struct timespec *rem) {
    return (int)raw_n(SYS_nanosleep, (long)req, (long)rem, 0, 0);
}

EXPORT int clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem) {
    int64_t ns = from_timespec(req);
    if (flags & TIMER_ABSTIME) {
        int known;
        int64_t vnow = virtual_ns(id, &known);
        if (known)
            ns -= vnow;
        else
            ns -= real_ns(id);
    }
    if (ns <= 0)
        return 0;
    if (is_main_thread())
        return virtual_sleep("clock_nanosleep", ns);
    struct timespec r;
    to_timespec(ns, &r);
    /* clock_nanosleep returns the error, not -1 with errno. */
    return real_sleep(&r, (flags & TIMER_ABSTIME) ? NULL : rem) == 0 ? 0 : errno;
}

EXPORT int nanosleep(const struct timespec *req, struct timespec *rem) {
    int64_t ns = from_timespec(req);
    if (ns > 0 && is_main_thread())
        return virtual_sleep("nanosleep", ns);
    return real_sleep(req, rem);
}

EXPORT int usleep(useconds_t us) {
    struct timespec r = {us / 1000000, (long)(us % 1000000) * 1000};
    return nanosleep(&r, NULL);
}

EXPORT unsigned int sleep(unsigned int s) {
    struct timespec r = {s, 0}, rem = {0, 0};
    if (nanosleep(&r, &rem) != 0)
        return (unsigned int)rem.tv_sec;
    return 0;
}

/* ---- entropy ---- */

static pthread_mutex_t rng_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rng_s[4];

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rng_seed(uint64_t seed) {
    /* A stream of its own: the clients' streams are seeded from the same `seed`. */
    uint64_t x = seed ^ 0x72657472796c6162ULL; /* "retrylab" */
    pthread_mutex_lock(&rng_lock);
    for (int i = 0; i < 4; i++)
        rng_s[i] = splitmix(&x);
    pthread_mutex_unlock(&rng_lock);
}

static uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

/* xoshiro256** */
static uint64_t rng_next_locked(void) {
    uint64_t r = rotl(rng_s[1] * 5, 7) * 9;
    uint64_t t = rng_s[1] << 17;
    rng_s[2] ^= rng_s[0];
    rng_s[3] ^= rng_s[1];
    rng_s[1] ^= rng_s[2];
    rng_s[0] ^= rng_s[3];
    rng_s[2] ^= t;
    rng_s[3] = rotl(rng_s[3], 45);
    return r;
}

static void fill(void *buf, size_t n) {
    unsigned char *p = buf;
    pthread_mutex_lock(&rng_lock);
    while (n > 0) {
        uint64_t v = rng_next_locked();
        size_t k = n < 8 ? n : 8;
        memcpy(p, &v, k);
        p += k;
        n -= k;
    }
    pthread_mutex_unlock(&rng_lock);
}

EXPORT ssize_t getrandom(void *buf, size_t n, unsigned int flags) {
    (void)flags;
    fill(buf, n);
    return (ssize_t)n;
}

EXPORT int getentropy(void *buf, size_t n) {
    if (n > 256) {
        errno = EIO;
        return -1;
    }
    fill(buf, n);
    return 0;
}

EXPORT uint32_t arc4random(void) {
    uint32_t v;
    fill(&v, sizeof v);
    return v;
}

EXPORT void arc4random_buf(void *buf, size_t n) {
    fill(buf, n);
}

EXPORT uint32_t arc4random_uniform(uint32_t bound) {
    if (bound < 2)
        return 0;
    uint32_t min = -bound % bound, v;
    do
        v = arc4random();
    while (v < min);
    return v % bound;
}

/* The descriptors open on /dev/urandom or /dev/random: their reads are the generator's. */
#define MAX_TRACKED 4096
static unsigned char random_fd[MAX_TRACKED];

static int is_random_path(const char *path) {
    return path != NULL && (strcmp(path, "/dev/urandom") == 0 || strcmp(path, "/dev/random") == 0);
}

static int track(int fd, const char *path) {
    if (fd >= 0 && fd < MAX_TRACKED)
        __atomic_store_n(&random_fd[fd], is_random_path(path), __ATOMIC_RELEASE);
    return fd;
}

static int is_random_fd(int fd) {
    return fd >= 0 && fd < MAX_TRACKED && __atomic_load_n(&random_fd[fd], __ATOMIC_ACQUIRE);
}

/* ---- storage: the run's own files (docs/executor-protocol.md, section 9) ----
 *
 * retrylab gives every run a directory of its own (a slot of RETRYLAB_STORAGE, the
 * design's storage for the command): `run/`, shared by the run's workers, and `wN/`, worker
 * N's (its working directory, HOME, and TMPDIR below it). At each `start` the shim reads
 * which slot its life belongs to (the file RETRYLAB_STORAGE/lives/PID, written by retrylab
 * before it sends `start`), enters the worker's directory and sets the variables.
 *
 * The directory the process was started in (the project) is seen through the worker's
 * directory: a path in the project, or a relative one, names the worker's copy if it has
 * one, else the project's file for reading; a write lands in the worker's directory (a
 * project file opened for writing is copied there first). In strict mode (RETRYLAB_STRICT
 * unset or not "0") a write elsewhere, outside the run's slot, is refused, and so is a write
 * before the first `start` (at import, in `init`: every life forked from this process would
 * share the file). Devices, FIFOs and sockets are not stored files. */

static char launch_dir[PATH_MAX]; /* where the process started: the project */
static char storage_root[PATH_MAX];
static char slot_dir[PATH_MAX];   /* this life's slot, once `start` came */
static char worker_dir[PATH_MAX]; /* slot/wN */
static volatile int started;
/* A crash may lose the worker's machine (workers.crash.machine_loss): each file of the
 * worker's directory has its committed bytes kept in slot/.synced/wN/..., for retrylab to put
 * back (storage.rs, lose_unsynced). */
static int keep_synced;

static int strict_files(void) {
    const char *v = getenv("RETRYLAB_STRICT");
    return !(v != NULL && v[0] == '0');
}

static int under(const char *p, const char *dir) {
    size_t n = strlen(dir);
    return n > 0 && strncmp(p, dir, n) == 0 && (p[n] == 0 || p[n] == '/');
}

/* `path` (relative to `dirfd`) as an absolute path with no `.`, `..` or `//`; -1 if too long. */
static int absolute(int dirfd, const char *path, char *out) {
    char tmp[PATH_MAX * 2];
    size_t n = 0;
    if (path[0] != '/') {
        if (dirfd == AT_FDCWD) {
            if (raw_n(SYS_getcwd, (long)tmp, PATH_MAX, 0, 0) < 0)
                return -1;
        } else {
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
            long r = raw_n(SYS_readlinkat, AT_FDCWD, (long)link, (long)tmp, PATH_MAX - 1);
            if (r < 0)
                return -1;
            tmp[r] = 0;
        }
        n = strlen(tmp);
        tmp[n++] = '/';
    }
    size_t len = strlen(path);
    if (n + len + 1 > sizeof tmp)
        return -1;
    memcpy(tmp + n, path, len + 1);
    /* Normalise into out: components one by one. */
    size_t o = 0;
    const char *c = tmp;
    while (*c) {
        while (*c == '/')
            c++;
        if (!*c)
            break;
        const char *e = c;
        while (*e && *e != '/')
            e++;
        size_t k = (size_t)(e - c);
        if (k == 1 && c[0] == '.') {
        } else if (k == 2 && c[0] == '.' && c[1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
        } else {
            if (o + k + 2 > PATH_MAX)
                return -1;
            out[o++] = '/';
            memcpy(out + o, c, k);
            o += k;
        }
        c = e;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = 0;
    return 0;
}

static int raw_stat(const char *p, struct stat *st) {
    return (int)raw_n(SYS_newfstatat, AT_FDCWD, (long)p, (long)st, 0);
}

/* mkdir -p of the directories of `p` (a path in the worker's directory) whose counterparts
 * are directories in the project. */
static void make_parents(const char *p) {
    char d[PATH_MAX];
    size_t wl = strlen(worker_dir);
    snprintf(d, sizeof d, "%s", p);
    for (char *q = d + wl + 1; (q = strchr(q, '/')) != NULL; q++) {
        *q = 0;
        raw_n(SYS_mkdirat, AT_FDCWD, (long)d, 0777, 0);
        *q = '/';
    }
}

static void copy_file(const char *from, const char *to, mode_t mode) {
    int in = (int)raw_n(SYS_openat, AT_FDCWD, (long)from, O_RDONLY | O_CLOEXEC, 0);
    if (in < 0)
        return;
    int out = (int)raw_n(SYS_openat, AT_FDCWD, (long)to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                         mode & 07777);
    if (out >= 0) {
        char buf[65536];
        long r;
        while ((r = raw_n(SYS_read, in, (long)buf, sizeof buf, 0)) > 0) {
            char *b = buf;
            while (r > 0) {
                long w = raw_n(SYS_write, out, (long)b, r, 0);
                if (w <= 0)
                    break;
                b += w;
                r -= w;
            }
        }
        raw_n(SYS_close, out, 0, 0, 0);
    }
    raw_n(SYS_close, in, 0, 0, 0);
}

/* The path of `p`'s committed bytes (slot/.synced/...) if `p` (absolute, normalised) is in
 * the worker's directory and they are kept; 0 otherwise. */
static int synced_path(const char *p, char *out) {
    if (!keep_synced || !started || !under(p, worker_dir))
        return 0;
    return snprintf(out, PATH_MAX, "%s/.synced/%s", slot_dir, p + strlen(slot_dir) + 1) <
           PATH_MAX;
}

/* mkdir -p of the directories of `p`, below `top`. */
static void make_dirs_below(const char *top, const char *p) {
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s", p);
    for (char *q = d + strlen(top) + 1; (q = strchr(q, '/')) != NULL; q++) {
        *q = 0;
        raw_n(SYS_mkdirat, AT_FDCWD, (long)d, 0700, 0);
        *q = '/';
    }
}

/* The file `p` (absolute) is durable as it is now: its bytes kept as committed. */
static void keep_committed(const char *p) {
    char k[PATH_MAX];
    if (!synced_path(p, k))
        return;
    make_dirs_below(slot_dir, k);
    raw_n(SYS_unlinkat, AT_FDCWD, (long)k, 0, 0);
    copy_file(p, k, 0600);
}

/* A name in the worker's directory moved (`to` NULL: removed; `dir`: a directory): its
 * committed bytes follow it. */
static void move_committed(int fd, const char *from, int td, const char *to, int dir) {
    char a[PATH_MAX], b[PATH_MAX], ka[PATH_MAX], kb[PATH_MAX];
    if (!keep_synced || absolute(fd, from, a) != 0)
        return;
    int have = synced_path(a, ka);
    if (to == NULL) {
        if (have)
            raw_n(SYS_unlinkat, AT_FDCWD, (long)ka, dir ? AT_REMOVEDIR : 0, 0);
        return;
    }
    if (absolute(td, to, b) != 0 || !synced_path(b, kb))
        return;
    struct stat st;
    if (have && raw_stat(ka, &st) == 0) {
        make_dirs_below(slot_dir, kb);
        raw_n(SYS_renameat, AT_FDCWD, (long)ka, AT_FDCWD, (long)kb);
    } else {
        raw_n(SYS_unlinkat, AT_FDCWD, (long)kb, 0, 0);
    }
}

static void refuse_write(const char *what, const char *path, const char *why) {
    char line[PATH_MAX + 900];
    snprintf(line, sizeof line,
             "retrylab strict mode violation: %s of %s %s (docs/executor-protocol.md, section "
             "9); the executor exits with status 4\n",
             what, path, why);
    write_all(2, line);
    _exit(EXIT_REFUSED);
}

/* The path a call should use for `path`: the same, or the project's file in `buf` for a
 * read of a file the worker has no copy of. Refuses a write it must refuse. */
static const char *route(int dirfd, const char *path, int write, char *buf, const char *what) {
    if (path == NULL || storage_root[0] == 0)
        return path;
    char p[PATH_MAX];
    if (absolute(dirfd, path, p) != 0)
        return path;
    if (under(p, "/dev") || under(p, "/proc") || under(p, "/sys"))
        return path;
    struct stat st;
    int exists = raw_stat(p, &st) == 0;
    if (write && exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        write = 0; /* a FIFO, a socket, a device: not a stored file */
    if (write && !started && strict_files())
        refuse_write(what, p,
                     "before the first `start` (at import or in init): every worker life forked "
                     "from this process would share the file, as no deployed process does; open "
                     "it when the handler runs (or on `start`)");
    if (!started)
        return path;
    char mapped[PATH_MAX];
    const char *q = p;
    int strict = strict_files();
    if (strict && !under(p, storage_root) && under(p, launch_dir) && strcmp(launch_dir, "/") != 0) {
        /* The project, as this worker sees it: its directory over the project's. */
        snprintf(mapped, sizeof mapped, "%s%s", worker_dir, p + strlen(launch_dir));
        q = mapped;
        exists = raw_stat(q, &st) == 0;
    }
    if (write && !under(q, slot_dir)) {
        if (strict)
            refuse_write(what, p,
                         "outside the run's storage: a file there outlives the run and is shared "
                         "with every other run; write under RETRYLAB_WORKER_DIR (the working "
                         "directory; relative paths land there), RETRYLAB_RUN_DIR, HOME or "
                         "TMPDIR, or serve with strict=False to let it through");
        return path;
    }
    if (!under(q, worker_dir)) {
        if (q == mapped) {
            snprintf(buf, PATH_MAX, "%s", q);
            return buf;
        }
        return path;
    }
    if (exists) {
        if (q == mapped) {
            snprintf(buf, PATH_MAX, "%s", q);
            return buf;
        }
        return path;
    }
    /* Not in the worker's directory: the project's, underneath. */
    char lower[PATH_MAX];
    snprintf(lower, sizeof lower, "%s%s", launch_dir, q + strlen(worker_dir));
    struct stat ls;
    int in_project = raw_stat(lower, &ls) == 0;
    if (!write) {
        snprintf(buf, PATH_MAX, "%s", in_project ? lower : q);
        return buf;
    }
    make_parents(q);
    if (in_project && S_ISREG(ls.st_mode)) {
        copy_file(lower, q, ls.st_mode);
        keep_committed(q); /* the machine's copy of the code was on its disk */
    }
    snprintf(buf, PATH_MAX, "%s", q);
    return buf;
}

static int writes(int flags) {
    return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)) != 0 ||
           (flags & O_TMPFILE) == O_TMPFILE;
}

/* The descriptors open for writing on a stored file: their times are virtual. */
static unsigned char stored_fd[4096];

static int in_storage(int dirfd, const char *path) {
    char p[PATH_MAX];
    return started && slot_dir[0] && path != NULL && absolute(dirfd, path, p) == 0 &&
           under(p, slot_dir);
}

static int do_open(int dirfd, const char *path, int flags, mode_t mode) {
    char buf[PATH_MAX];
    int w = writes(flags);
    const char *p = route(dirfd, path, w, buf, "an open for writing");
    int fd = track((int)raw_n(SYS_openat, dirfd, (long)p, flags, mode), path);
    if (fd >= 0 && fd < (int)sizeof stored_fd)
        stored_fd[fd] = w && in_storage(dirfd, p);
    return fd;
}

/* A stored file's access and modification times: the virtual wall clock when it was last
 * written (set when its descriptor is synced or closed). */
static void stamp(int fd) {
    if (fd < 0 || fd >= (int)sizeof stored_fd || !stored_fd[fd])
        return;
    int known;
    struct timespec t[2];
    to_timespec(virtual_ns(CLOCK_REALTIME, &known), &t[0]);
    t[1] = t[0];
    raw_n(SYS_utimensat, fd, 0, (long)t, 0);
}

static void commit_point(int fd);

/* The stored file open as `fd` is committed: its bytes kept, if a machine loss may come. */
static void keep_committed_fd(int fd) {
    if (!keep_synced || fd < 0 || fd >= (int)sizeof stored_fd || !stored_fd[fd])
        return;
    struct stat st;
    if (raw_n(SYS_fstat, fd, (long)&st, 0, 0) != 0 || st.st_nlink == 0 || !S_ISREG(st.st_mode))
        return;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    long r = raw_n(SYS_readlinkat, AT_FDCWD, (long)link, (long)path, PATH_MAX - 1);
    if (r <= 0)
        return;
    path[r] = 0;
    keep_committed(path);
}

/* A commit: a crash point (the simulator may end the process in it), then the real call. */
EXPORT int fsync(int fd) {
    stamp(fd);
    commit_point(fd);
    int r = (int)raw_n(SYS_fsync, fd, 0, 0, 0);
    if (r == 0)
        keep_committed_fd(fd);
    return r;
}

EXPORT int fdatasync(int fd) {
    stamp(fd);
    commit_point(fd);
    int r = (int)raw_n(SYS_fdatasync, fd, 0, 0, 0);
    if (r == 0)
        keep_committed_fd(fd);
    return r;
}

/* Directories of the run's storage are listed in name order (a filesystem's own order is
 * a function of its hashes, not of the run). */
struct sorted_dir {
    DIR *dir;
    struct dirent64 *ents;
    size_t n, i;
};
static struct sorted_dir sorted[256];
static pthread_mutex_t sorted_lock = PTHREAD_MUTEX_INITIALIZER;

typedef DIR *(*opendir_fn)(const char *);
typedef DIR *(*fdopendir_fn)(int);
typedef struct dirent64 *(*readdir64_fn)(DIR *);
typedef int (*closedir_fn)(DIR *);
typedef void (*rewinddir_fn)(DIR *);
static opendir_fn real_opendir;
static fdopendir_fn real_fdopendir;
static readdir64_fn real_readdir64;
static closedir_fn real_closedir;
static rewinddir_fn real_rewinddir;

static void dir_fns(void) {
    if (real_readdir64 == NULL) {
        real_opendir = (opendir_fn)dlsym(RTLD_NEXT, "opendir");
        real_fdopendir = (fdopendir_fn)dlsym(RTLD_NEXT, "fdopendir");
        real_closedir = (closedir_fn)dlsym(RTLD_NEXT, "closedir");
        real_rewinddir = (rewinddir_fn)dlsym(RTLD_NEXT, "rewinddir");
        real_readdir64 = (readdir64_fn)dlsym(RTLD_NEXT, "readdir64");
    }
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const struct dirent64 *)a)->d_name, ((const struct dirent64 *)b)->d_name);
}

/* Reads all of `d` now and keeps its entries sorted, to be served in that order. */
static DIR *sort_dir(DIR *d) {
    if (d == NULL)
        return d;
    size_t cap = 16, n = 0;
    struct dirent64 *ents = malloc(cap * sizeof *ents), *e;
    if (ents == NULL)
        return d;
    while ((e = real_readdir64(d)) != NULL) {
        if (n == cap) {
            struct dirent64 *more = realloc(ents, 2 * cap * sizeof *ents);
            if (more == NULL)
                break;
            ents = more;
            cap *= 2;
        }
        ents[n++] = *e;
    }
    qsort(ents, n, sizeof *ents, by_name);
    pthread_mutex_lock(&sorted_lock);
    for (size_t k = 0; k < sizeof sorted / sizeof sorted[0]; k++) {
        if (sorted[k].dir == NULL) {
            sorted[k] = (struct sorted_dir){d, ents, n, 0};
            pthread_mutex_unlock(&sorted_lock);
            return d;
        }
    }
    pthread_mutex_unlock(&sorted_lock);
    free(ents); /* too many open at once: this one in the filesystem's order */
    real_rewinddir(d);
    return d;
}

static struct sorted_dir *find_sorted(DIR *d) {
    for (size_t k = 0; k < sizeof sorted / sizeof sorted[0]; k++)
        if (sorted[k].dir == d)
            return &sorted[k];
    return NULL;
}

EXPORT DIR *opendir(const char *path) {
    dir_fns();
    char buf[PATH_MAX];
    const char *p = route(AT_FDCWD, path, 0, buf, "opendir");
    DIR *d = real_opendir(p);
    return in_storage(AT_FDCWD, p) ? sort_dir(d) : d;
}

EXPORT DIR *fdopendir(int fd) {
    dir_fns();
    DIR *d = real_fdopendir(fd);
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    long r = raw_n(SYS_readlinkat, AT_FDCWD, (long)link, (long)target, PATH_MAX - 1);
    if (r > 0) {
        target[r] = 0;
        if (in_storage(AT_FDCWD, target))
            return sort_dir(d);
    }
    return d;
}

EXPORT struct dirent64 *readdir64(DIR *d) {
    dir_fns();
    pthread_mutex_lock(&sorted_lock);
    struct sorted_dir *s = find_sorted(d);
    if (s != NULL) {
        struct dirent64 *e = s->i < s->n ? &s->ents[s->i++] : NULL;
        pthread_mutex_unlock(&sorted_lock);
        return e;
    }
    pthread_mutex_unlock(&sorted_lock);
    return real_readdir64(d);
}

/* On the 64-bit platforms the shim is for, struct dirent is struct dirent64. */
_Static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "dirent is dirent64");
EXPORT struct dirent *readdir(DIR *d) {
    return (struct dirent *)readdir64(d);
}

EXPORT void rewinddir(DIR *d) {
    dir_fns();
    pthread_mutex_lock(&sorted_lock);
    struct sorted_dir *s = find_sorted(d);
    if (s != NULL)
        s->i = 0;
    pthread_mutex_unlock(&sorted_lock);
    real_rewinddir(d);
}

EXPORT int closedir(DIR *d) {
    dir_fns();
    pthread_mutex_lock(&sorted_lock);
    struct sorted_dir *s = find_sorted(d);
    if (s != NULL) {
        free(s->ents);
        *s = (struct sorted_dir){NULL, NULL, 0, 0};
    }
    pthread_mutex_unlock(&sorted_lock);
    return real_closedir(d);
}

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

EXPORT int open(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_open(AT_FDCWD, path, flags, mode);
}

EXPORT int open64(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_open(AT_FDCWD, path, flags, mode);
}

EXPORT int openat(int dir, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_open(dir, path, flags, mode);
}

EXPORT int openat64(int dir, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_open(dir, path, flags, mode);
}

/* The fortified forms (_FORTIFY_SOURCE) of open and openat. */
EXPORT int __open_2(const char *path, int flags) {
    return do_open(AT_FDCWD, path, flags, 0);
}

EXPORT int __open64_2(const char *path, int flags) {
    return do_open(AT_FDCWD, path, flags, 0);
}

EXPORT int __openat_2(int dir, const char *path, int flags) {
    return do_open(dir, path, flags, 0);
}

EXPORT int __openat64_2(int dir, const char *path, int flags) {
    return do_open(dir, path, flags, 0);
}

EXPORT int creat(const char *path, mode_t mode) {
    return do_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

EXPORT int creat64(const char *path, mode_t mode) {
    return do_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

/* Path calls that read: the project's file when the worker has no copy. */
#define ROUTED(ret, name, write, params, args, path_expr, dirfd_expr)                          \
    typedef ret(*name##_fn) params;                                                          \
    static name##_fn real_##name;                                                            \
    EXPORT ret name params {                                                                 \
        if (real_##name == NULL)                                                             \
            real_##name = (name##_fn)dlsym(RTLD_NEXT, #name);                                \
        char buf_[PATH_MAX];                                                                 \
        const char *routed_ = route(dirfd_expr, path_expr, write, buf_, #name);              \
        (void)routed_;                                                                       \
        return real_##name args;                                                             \
    }

ROUTED(int, stat, 0, (const char *path, struct stat *st), (routed_, st), path, AT_FDCWD)
ROUTED(int, lstat, 0, (const char *path, struct stat *st), (routed_, st), path, AT_FDCWD)
ROUTED(int, stat64, 0, (const char *path, struct stat64 *st), (routed_, st), path, AT_FDCWD)
ROUTED(int, lstat64, 0, (const char *path, struct stat64 *st), (routed_, st), path, AT_FDCWD)
ROUTED(int, fstatat, 0, (int d, const char *path, struct stat *st, int f), (d, routed_, st, f), path, d)
ROUTED(int, fstatat64, 0, (int d, const char *path, struct stat64 *st, int f), (d, routed_, st, f),
       path, d)
ROUTED(int, __xstat, 0, (int v, const char *path, struct stat *st), (v, routed_, st), path, AT_FDCWD)
ROUTED(int, __lxstat, 0, (int v, const char *path, struct stat *st), (v, routed_, st), path, AT_FDCWD)
ROUTED(int, __xstat64, 0, (int v, const char *path, struct stat64 *st), (v, routed_, st), path,
       AT_FDCWD)
ROUTED(int, __lxstat64, 0, (int v, const char *path, struct stat64 *st), (v, routed_, st), path,
       AT_FDCWD)
ROUTED(int, __fxstatat, 0, (int v, int d, const char *path, struct stat *st, int f),
       (v, d, routed_, st, f), path, d)
ROUTED(int, __fxstatat64, 0, (int v, int d, const char *path, struct stat64 *st, int f),
       (v, d, routed_, st, f), path, d)
ROUTED(int, statx, 0, (int d, const char *path, int f, unsigned int m, struct statx *st),
       (d, routed_, f, m, st), path, d)
ROUTED(int, access, 0, (const char *path, int m), (routed_, m), path, AT_FDCWD)
ROUTED(int, faccessat, 0, (int d, const char *path, int m, int f), (d, routed_, m, f), path, d)
ROUTED(int, euidaccess, 0, (const char *path, int m), (routed_, m), path, AT_FDCWD)
ROUTED(ssize_t, readlink, 0, (const char *restrict path, char *restrict b, size_t n), (routed_, b, n),
       path, AT_FDCWD)
ROUTED(ssize_t, readlinkat, 0, (int d, const char *restrict path, char *restrict b, size_t n),
       (d, routed_, b, n), path, d)
ROUTED(int, chdir, 0, (const char *path), (routed_), path, AT_FDCWD)
ROUTED(int, mkdir, 1, (const char *path, mode_t m), (routed_, m), path, AT_FDCWD)
ROUTED(int, mkdirat, 1, (int d, const char *path, mode_t m), (d, routed_, m), path, d)
/* A name removed from the worker's directory takes its committed bytes with it. */
#define REMOVING(name, params, args, dirfd_expr, dir_expr)                                     \
    typedef int(*name##_fn) params;                                                          \
    static name##_fn real_##name;                                                            \
    EXPORT int name params {                                                                 \
        if (real_##name == NULL)                                                             \
            real_##name = (name##_fn)dlsym(RTLD_NEXT, #name);                                \
        char buf_[PATH_MAX];                                                                 \
        const char *routed_ = route(dirfd_expr, path, 1, buf_, #name);                       \
        int r_ = real_##name args;                                                           \
        if (r_ == 0)                                                                         \
            move_committed(dirfd_expr, routed_, AT_FDCWD, NULL, dir_expr);                   \
        return r_;                                                                           \
    }

REMOVING(rmdir, (const char *path), (routed_), AT_FDCWD, 1)
REMOVING(unlink, (const char *path), (routed_), AT_FDCWD, 0)
REMOVING(unlinkat, (int d, const char *path, int f), (d, routed_, f), d, (f & AT_REMOVEDIR) != 0)
ROUTED(int, truncate, 1, (const char *path, off_t n), (routed_, n), path, AT_FDCWD)

typedef int (*rename_fn)(const char *, const char *);
static rename_fn real_rename;
EXPORT int rename(const char *from, const char *to) {
    if (real_rename == NULL)
        real_rename = (rename_fn)dlsym(RTLD_NEXT, "rename");
    char a[PATH_MAX], b[PATH_MAX];
    const char *f = route(AT_FDCWD, from, 1, a, "a rename");
    const char *t = route(AT_FDCWD, to, 1, b, "a rename");
    int r = real_rename(f, t);
    if (r == 0)
        move_committed(AT_FDCWD, f, AT_FDCWD, t, 0);
    return r;
}

typedef int (*renameat_fn)(int, const char *, int, const char *);
static renameat_fn real_renameat;
EXPORT int renameat(int fd, const char *from, int td, const char *to) {
    if (real_renameat == NULL)
        real_renameat = (renameat_fn)dlsym(RTLD_NEXT, "renameat");
    char a[PATH_MAX], b[PATH_MAX];
    const char *f = route(fd, from, 1, a, "a rename");
    const char *t = route(td, to, 1, b, "a rename");
    int r = real_renameat(fd, f, td, t);
    if (r == 0)
        move_committed(fd, f, td, t, 0);
    return r;
}

typedef int (*renameat2_fn)(int, const char *, int, const char *, unsigned int);
static renameat2_fn real_renameat2;
EXPORT int renameat2(int fd, const char *from, int td, const char *to, unsigned int flags) {
    if (real_renameat2 == NULL)
        real_renameat2 = (renameat2_fn)dlsym(RTLD_NEXT, "renameat2");
    char a[PATH_MAX], b[PATH_MAX];
    const char *f = route(fd, from, 1, a, "a rename");
    const char *t = route(td, to, 1, b, "a rename");
    int r = real_renameat2(fd, f, td, t, flags);
    if (r == 0)
        move_committed(fd, f, td, t, 0);
    return r;
}

/* A life's `start`: its slot (the file retrylab wrote for this pid), its worker's directory
 * as the working directory, and the variables that name them. */
static void enter_storage(uint64_t worker) {
    if (storage_root[0] == 0)
        return;
    char f[PATH_MAX];
    snprintf(f, sizeof f, "%s/lives/%ld", storage_root, raw_n(SYS_getpid, 0, 0, 0, 0));
    int fd = (int)raw_n(SYS_openat, AT_FDCWD, (long)f, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return;
    long n = raw_n(SYS_read, fd, (long)slot_dir, PATH_MAX - 1, 0);
    raw_n(SYS_close, fd, 0, 0, 0);
    raw_n(SYS_unlinkat, AT_FDCWD, (long)f, 0, 0); /* read once: the lives directory stays small */
    if (n <= 0)
        return;
    slot_dir[n] = 0;
    char *nl = strchr(slot_dir, '\n');
    keep_synced = 0;
    if (nl != NULL) {
        keep_synced = strncmp(nl + 1, "synced", 6) == 0;
        *nl = 0;
    }
    snprintf(worker_dir, sizeof worker_dir, "%s/w%llu", slot_dir, (unsigned long long)worker);
    char run[PATH_MAX], tmp[PATH_MAX];
    snprintf(run, sizeof run, "%s/run", slot_dir);
    snprintf(tmp, sizeof tmp, "%s/tmp", worker_dir);
    raw_n(SYS_chdir, (long)worker_dir, 0, 0, 0);
    setenv("RETRYLAB_RUN_DIR", run, 1);
    setenv("RETRYLAB_WORKER_DIR", worker_dir, 1);
    setenv("HOME", worker_dir, 1);
    setenv("TMPDIR", tmp, 1);
    started = 1;
}

static ssize_t random_read(void *cookie, char *buf, size_t n) {
    (void)cookie;
    fill(buf, n);
    return (ssize_t)n;
}

REAL(FILE *, fopen, const char *, const char *)
REAL(FILE *, fopen64, const char *, const char *)

static FILE *random_file(void) {
    cookie_io_functions_t io = {random_read, NULL, NULL, NULL};
    return fopencookie(NULL, "r", io);
}

static int mode_writes(const char *mode) {
    return mode != NULL && (strchr(mode, 'w') != NULL || strchr(mode, 'a') != NULL ||
                            strchr(mode, '+') != NULL);
}

EXPORT FILE *fopen(const char *path, const char *mode) {
    if (is_random_path(path))
        return random_file();
    char buf[PATH_MAX];
    return get_fopen()(route(AT_FDCWD, path, mode_writes(mode), buf, "an fopen for writing"), mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode) {
    if (is_random_path(path))
        return random_file();
    char buf[PATH_MAX];
    return get_fopen64()(route(AT_FDCWD, path, mode_writes(mode), buf, "an fopen for writing"),
                         mode);
}

EXPORT int close(int fd) {
    if (fd >= 0 && fd < MAX_TRACKED)
        __atomic_store_n(&random_fd[fd], 0, __ATOMIC_RELEASE);
    if (fd >= 0 && fd < (int)sizeof stored_fd && stored_fd[fd]) {
        stamp(fd);
        stored_fd[fd] = 0;
    }
    return (int)raw_n(SYS_close, fd, 0, 0, 0);
}

/* ---- the channel: now_ms and start.seed from the bytes the process reads ---- */

/* A scanner of the newline-delimited JSON on the channel: the top-level keys `now_ms`,
 * `seed` and `worker` (numbers), `type` and `mode` (strings); applied at each line's end.
 * The messages are objects whose values hold no top-level-looking key: a string's quotes are
 * escaped, nested objects are deeper. One scanner reads what the simulator sends, one what
 * the process sends (only its kinds matter: a call ends with `result`; `hello` says the
 * mode). */
struct scanner {
    int out; /* the process's messages */
    int depth, in_string, escape;
    char str[16];
    int str_len;   /* -1: the string is longer than str */
    char key[16];  /* the key whose value comes next (after ':' at depth 1) */
    int in_value;  /* after ':' at depth 1, before ',' or '}' */
    int num_active;
    uint64_t num;
    int have_now, have_seed, have_worker;
    uint64_t now, seed, worker;
    char type[16], mode[16];
};

static struct scanner scan_in = {.out = 0}, scan_out = {.out = 1};
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static int fd_out = 4;
/* A sync process handles a call: from its `invoke` to its `result` (a sleep may be sent). */
static volatile int in_call;
static volatile int async_mode;
/* The simulator reads what the process sends: from a line it sent to the message that ends
 * the process's turn (`ready`, `idle`; in sync mode `http`, `sleep`, `result` too). */
static volatile int in_turn;

static void scan_end_value(struct scanner *s) {
    if (s->num_active) {
        if (strcmp(s->key, "now_ms") == 0) {
            s->have_now = 1;
            s->now = s->num;
        } else if (strcmp(s->key, "seed") == 0) {
            s->have_seed = 1;
            s->seed = s->num;
        } else if (strcmp(s->key, "worker") == 0) {
            s->have_worker = 1;
            s->worker = s->num;
        }
    }
    s->num_active = 0;
    s->num = 0;
    s->in_value = 0;
    s->key[0] = 0;
}

static void scan_line_end(struct scanner *s) {
    if (s->depth != 0)
        return;
    if (s->out) {
        if (strcmp(s->type, "result") == 0)
            in_call = 0;
        else if (strcmp(s->type, "hello") == 0 && strcmp(s->mode, "async") == 0)
            async_mode = 1;
        if (strcmp(s->type, "ready") == 0 || strcmp(s->type, "idle") == 0 ||
            (!async_mode && (strcmp(s->type, "http") == 0 || strcmp(s->type, "sleep") == 0 ||
                             strcmp(s->type, "result") == 0)))
            in_turn = 0;
        return;
    }
    in_turn = 1;
    int start = strcmp(s->type, "start") == 0;
    if (start && s->have_seed)
        rng_seed(s->seed);
    if (start && s->have_worker)
        enter_storage(s->worker);
    if (s->have_now)
        __atomic_store_n(&now_ms, (int64_t)s->now, __ATOMIC_RELEASE);
    if (strcmp(s->type, "invoke") == 0)
        in_call = 1;
    else if (start)
        in_call = 0;
}

static void scan_byte(struct scanner *s, unsigned char c) {
    if (s->in_string) {
        if (s->escape) {
            s->escape = 0;
            s->str_len = -1; /* no key we watch has an escape */
        } else if (c == '\\') {
            s->escape = 1;
        } else if (c == '"') {
            s->in_string = 0;
            if (s->str_len >= 0)
                s->str[s->str_len] = 0;
            else
                s->str[0] = 0;
            if (s->depth == 1 && s->in_value) {
                if (strcmp(s->key, "type") == 0)
                    memcpy(s->type, s->str, sizeof s->type);
                else if (strcmp(s->key, "mode") == 0)
                    memcpy(s->mode, s->str, sizeof s->mode);
            }
        } else if (s->str_len >= 0) {
            if (s->str_len < (int)sizeof s->str - 1)
                s->str[s->str_len++] = (char)c;
            else
                s->str_len = -1;
        }
        return;
    }
    switch (c) {
    case '\n': {
        scan_line_end(s);
        int out = s->out;
        memset(s, 0, sizeof *s);
        s->out = out;
        return;
    }
    case '"':
        s->in_string = 1;
        s->str_len = 0;
        return;
    case '{':
    case '[':
        s->depth++;
        return;
    case '}':
    case ']':
        if (s->depth == 1)
            scan_end_value(s);
        s->depth--;
        return;
    case ':':
        if (s->depth == 1 && !s->in_value) {
            memcpy(s->key, s->str, sizeof s->key);
            s->in_value = 1;
        }
        return;
    case ',':
        if (s->depth == 1)
            scan_end_value(s);
        return;
    default:
        if (s->depth == 1 && s->in_value && c >= '0' && c <= '9') {
            s->num_active = 1;
            s->num = s->num * 10 + (uint64_t)(c - '0');
        }
        return;
    }
}

static void scan_bytes(struct scanner *s, const void *buf, ssize_t n) {
    if (n <= 0)
        return;
    pthread_mutex_lock(&scan_lock);
    const unsigned char *p = buf;
    for (ssize_t i = 0; i < n; i++)
        scan_byte(s, p[i]);
    pthread_mutex_unlock(&scan_lock);
}

/* Bytes from the simulator that the shim read while it waited for its own answer (a
 * `cancel` that came before a `wake`), handed to the process's next reads first. */
static char pending[65536];
static size_t pending_len;

EXPORT ssize_t read(int fd, void *buf, size_t n) {
    if (is_random_fd(fd)) {
        fill(buf, n);
        return (ssize_t)n;
    }
    ssize_t r;
    if (fd == fd_in && pending_len > 0) {
        r = (ssize_t)(n < pending_len ? n : pending_len);
        memcpy(buf, pending, (size_t)r);
        memmove(pending, pending + r, pending_len - (size_t)r);
        pending_len -= (size_t)r;
    } else {
        r = raw_n(SYS_read, fd, (long)buf, (long)n, 0);
    }
    if (fd == fd_in)
        scan_bytes(&scan_in, buf, r);
    return r;
}

EXPORT ssize_t write(int fd, const void *buf, size_t n) {
    ssize_t r = raw_n(SYS_write, fd, (long)buf, (long)n, 0);
    if (fd == fd_out)
        scan_bytes(&scan_out, buf, r);
    return r;
}

/* A sleep of the protocol thread below the interpreter, during a call of a sync process: a
 * protocol `sleep` of the whole milliseconds (rounded up), then the simulator's `wake`, as
 * the clients' own sleeps are. Anywhere else it is refused. */
static uint64_t next_shim_id = (uint64_t)1 << 52; /* far from the client's own ids */

/* Waits for the simulator's answer of `type` to the shim's request `id`; the lines that come
 * before it (a `cancel`) are kept for the process's next reads. */
static void await_answer(const char *type, uint64_t id) {
    char want_type[48], want[64];
    snprintf(want_type, sizeof want_type, "\"type\":\"%s\"", type);
    snprintf(want, sizeof want, "\"in_reply_to\":%llu,", (unsigned long long)id);
    static char acc[65536];
    size_t len = 0;
    for (;;) {
        if (len == sizeof acc)
            _exit(EXIT_REFUSED);
        long r = raw_n(SYS_read, fd_in, (long)acc + (long)len, (long)(sizeof acc - len), 0);
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
            /* A runtime made the channel non-blocking (Node's libuv does): wait for it. */
            struct pollfd p = {.fd = fd_in, .events = POLLIN};
            raw_n(SYS_ppoll, (long)&p, 1, 0, 0);
            continue;
        }
        if (r <= 0)
            _exit(0); /* the simulator is gone */
        len += (size_t)r;
        char *line = acc, *nl;
        while ((nl = memchr(line, '\n', len - (size_t)(line - acc))) != NULL) {
            size_t k = (size_t)(nl - line) + 1;
            int answer = memmem(line, k, want_type, strlen(want_type)) != NULL &&
                         memmem(line, k, want, strlen(want)) != NULL;
            if (answer) {
                scan_bytes(&scan_in, line, (ssize_t)k);
                size_t rest = len - (size_t)(line - acc) - k;
                if (pending_len + rest <= sizeof pending) {
                    memcpy(pending + pending_len, nl + 1, rest);
                    pending_len += rest;
                }
                return;
            }
            if (pending_len + k <= sizeof pending) {
                memcpy(pending + pending_len, line, k);
                pending_len += k;
            }
            line += k;
        }
        size_t rest = len - (size_t)(line - acc);
        memmove(acc, line, rest);
        len = rest;
    }
}

/* A sleep of the protocol thread below the interpreter, during a call of a sync process: a
 * protocol `sleep` of the whole milliseconds (rounded up), then the simulator's `wake`, as
 * the clients' own sleeps are. Anywhere else it is refused. */
static int virtual_sleep(const char *what, int64_t ns) {
    if (!in_call || async_mode)
        refuse_sleep(what, ns);
    uint64_t id = next_shim_id++;
    char msg[128];
    snprintf(msg, sizeof msg, "{\"type\":\"sleep\",\"msg_id\":%llu,\"ms\":%lld}\n",
             (unsigned long long)id, (long long)((ns + 999999) / 1000000));
    write_all(fd_out, msg);
    await_answer("wake", id);
    return 0;
}

/* An fsync of a stored file during the process's turn, on the thread that speaks the
 * protocol: a protocol `commit` naming the file (relative to the run's storage), then the
 * simulator's `committed`, or the end of the process there (a crash at a commit). Elsewhere
 * (between turns, on another thread) a commit is no crash point. */
static void commit_point(int fd) {
    if (fd < 0 || fd >= (int)sizeof stored_fd || !stored_fd[fd] || !started || !in_turn ||
        !is_main_thread())
        return;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    long r = raw_n(SYS_readlinkat, AT_FDCWD, (long)link, (long)path, PATH_MAX - 1);
    if (r <= 0)
        return;
    path[r] = 0;
    const char *rel = under(path, slot_dir) ? path + strlen(slot_dir) + 1 : path;
    char file[PATH_MAX * 2];
    size_t o = 0;
    for (const char *c = rel; *c && o + 8 < sizeof file; c++) {
        unsigned char b = (unsigned char)*c;
        if (b == '"' || b == '\\') {
            file[o++] = '\\';
            file[o++] = (char)b;
        } else if (b < 0x20) {
            o += (size_t)snprintf(file + o, sizeof file - o, "\\u%04x", b);
        } else {
            file[o++] = (char)b;
        }
    }
    file[o] = 0;
    uint64_t id = next_shim_id++;
    char msg[PATH_MAX * 2 + 96];
    snprintf(msg, sizeof msg, "{\"type\":\"commit\",\"msg_id\":%llu,\"file\":\"%s\"}\n",
             (unsigned long long)id, file);
    write_all(fd_out, msg);
    await_answer("committed", id);
}

/* ---- syscall(): the clock and entropy calls made through it ---- */

EXPORT long syscall(long number, ...) {
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    switch (number) {
    case SYS_clock_gettime:
        return clock_gettime((clockid_t)a[0], (struct timespec *)a[1]);
    case SYS_gettimeofday:
        return gettimeofday((struct timeval *)a[0], (void *)a[1]);
#ifdef SYS_time
    case SYS_time:
        return (long)time((time_t *)a[0]);
#endif
    case SYS_getrandom:
        return getrandom((void *)a[0], (size_t)a[1], (unsigned int)a[2]);
    case SYS_statx: {
        char buf[PATH_MAX];
        const char *p = route((int)a[0], (const char *)a[1], 0, buf, "statx");
        return raw6(number, a[0], (long)p, a[2], a[3], a[4], 0);
    }
    case SYS_openat:
        return do_open((int)a[0], (const char *)a[1], (int)a[2], (mode_t)a[3]);
    case SYS_read:
        return read((int)a[0], (void *)a[1], (size_t)a[2]);
    case SYS_nanosleep:
        return nanosleep((const struct timespec *)a[0], (struct timespec *)a[1]);
    case SYS_clock_nanosleep: {
        int e = clock_nanosleep((clockid_t)a[0], (int)a[1], (const struct timespec *)a[2],
                                (struct timespec *)a[3]);
        if (e != 0) {
            errno = e;
            return -1;
        }
        return 0;
    }
    default:
        return raw6(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    }
}

/* ---- dlsym: a library's own symbol, looked up by its handle ----
 *
 * `ctypes.CDLL("libc.so.6").clock_gettime` (and any dlopen + dlsym of libc) asks libc's
 * handle, which preloading does not reach: the lookup would find libc's own clock. For the
 * symbols this shim serves, such a lookup gets the shim's. */

static const char *const served[] = {
    "clock_gettime", "gettimeofday", "time", "timespec_get", "clock", "getrandom", "getentropy",
    "arc4random", "arc4random_buf", "arc4random_uniform", "nanosleep", "clock_nanosleep",
    "usleep", "sleep", "syscall", "open", "open64", "openat", "openat64", "fopen", "fopen64",
    "read", "close", "fsync", "fdatasync", "stat", "lstat", "fstatat", "statx", "access",
    "opendir", "readdir", "readdir64", "closedir", "mkdir", "unlink", "rename", "rmdir",
    "pthread_cond_timedwait", "pthread_cond_clockwait", "sem_timedwait", "sem_clockwait",
    "pthread_mutex_timedlock", "pthread_mutex_clocklock", "timerfd_settime", "timer_settime",
};

typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn real_dlsym;

static dlsym_fn get_real_dlsym(void) {
    if (real_dlsym == NULL) {
        static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.17", "GLIBC_2.2.5"};
        for (size_t i = 0; i < sizeof versions / sizeof versions[0] && real_dlsym == NULL; i++)
            real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    }
    return real_dlsym;
}

EXPORT void *dlsym(void *restrict handle, const char *restrict name) {
    dlsym_fn real = get_real_dlsym();
    if (real == NULL)
        return NULL;
    if (handle != RTLD_NEXT && handle != RTLD_DEFAULT && name != NULL) {
        for (size_t i = 0; i < sizeof served / sizeof served[0]; i++)
            if (strcmp(name, served[i]) == 0)
                return real(RTLD_DEFAULT, name);
    }
    return real(handle, name);
}

__attribute__((constructor)) static void shim_init(void) {
    const char *s = getenv("RETRYLAB_FD_IN");
    if (s != NULL && *s)
        fd_in = atoi(s);
    const char *o = getenv("RETRYLAB_FD_OUT");
    if (o != NULL && *o)
        fd_out = atoi(o);
    rng_seed(0);
    if (raw_n(SYS_getcwd, (long)launch_dir, sizeof launch_dir, 0, 0) < 0)
        launch_dir[0] = 0;
    const char *r = getenv("RETRYLAB_STORAGE");
    if (r != NULL && *r && absolute(AT_FDCWD, r, storage_root) != 0)
        storage_root[0] = 0;
}
