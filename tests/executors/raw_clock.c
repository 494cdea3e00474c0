/* An executor in C that speaks the protocol by hand and mints each call's idempotency key
 * from the machine's clock, read with the kernel's own entry (an inline `syscall`
 * instruction), which no preloaded library can serve: what retrylab's shim cannot see
 * (docs/executor-protocol.md, section 9). Built by tests/shim_refusals.rs twice: linked
 * dynamically, the shim is loaded and the determinism check refuses the executor (two runs
 * send different keys); linked statically, the shim cannot be loaded and the executor is
 * refused after its hello. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long raw_clock_gettime(long id, struct timespec *ts) {
    long r;
#if defined(__x86_64__)
    __asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_clock_gettime), "D"(id), "S"(ts) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = SYS_clock_gettime;
    register long x0 __asm__("x0") = id;
    register long x1 __asm__("x1") = (long)ts;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1) : "memory");
    r = x0;
#endif
    return r;
}

static FILE *in, *out;

static void send(const char *line) {
    fputs(line, out);
    fputc('\n', out);
    fflush(out);
}

/* The value of string field `key` in `line` (a flat search: enough for these messages). */
static void field(const char *line, const char *key, char *value, size_t n) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(line, pat);
    value[0] = 0;
    if (p == NULL)
        return;
    p += strlen(pat);
    size_t i = 0;
    while (p[i] && p[i] != '"' && i + 1 < n) {
        value[i] = p[i];
        i++;
    }
    value[i] = 0;
}

int main(void) {
    in = fdopen(3, "r");
    out = fdopen(4, "w");
    char line[65536];
    send("{\"type\":\"hello\",\"protocol\":1,\"mode\":\"sync\",\"tools\":[\"create\"]}");
    if (fgets(line, sizeof line, in) == NULL)
        return 1;
    send("{\"type\":\"init_ok\"}");
    long msg_id = 0;
    while (fgets(line, sizeof line, in) != NULL) {
        char type[32], call[64], ref[64], tenant[64];
        field(line, "type", type, sizeof type);
        if (strcmp(type, "start") == 0) {
            send("{\"type\":\"ready\"}");
        } else if (strcmp(type, "invoke") == 0) {
            field(line, "call", call, sizeof call);
            field(line, "ref", ref, sizeof ref);
            field(line, "tenant", tenant, sizeof tenant);
            const char *issue = strstr(line, "\"issue\":");
            int n = issue ? atoi(issue + 8) : 1;
            struct timespec ts;
            raw_clock_gettime(CLOCK_REALTIME, &ts);
            char msg[1024];
            snprintf(msg, sizeof msg,
                     "{\"type\":\"http\",\"msg_id\":%ld,\"call\":\"%s\",\"method\":\"POST\","
                     "\"url\":\"http://provider.sim/v1/resources\",\"headers\":{\"idempotency-key\":"
                     "\"%016lx%016lx\"},\"body\":\"{\\\"ref\\\":\\\"%s\\\",\\\"tenant\\\":\\\"%s\\\"}\","
                     "\"timeout_ms\":5000}",
                     ++msg_id, call, (long)ts.tv_sec, (long)ts.tv_nsec, ref, tenant);
            send(msg);
            do {
                if (fgets(line, sizeof line, in) == NULL)
                    return 0;
                field(line, "type", type, sizeof type);
            } while (strcmp(type, "cancel") == 0);
            const char *status = strstr(line, "\"status\":");
            int ok = strcmp(type, "http_response") == 0 && status && atoi(status + 9) < 300;
            snprintf(msg, sizeof msg, "{\"type\":\"result\",\"call\":\"%s\",\"issue\":%d,\"outcome\":\"%s\"}",
                     call, n, ok ? "ok" : "unknown");
            send(msg);
        } else if (strcmp(type, "shutdown") == 0) {
            return 0;
        }
    }
    return 0;
}
