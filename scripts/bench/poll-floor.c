// The least a server can do for a snapshot poll, as a reference for vm-compare --floor: one
// thread that blocks in accept(), reads the request head, writes one JPEG held in memory with
// a fixed head, and closes. No event loop, no parsing, no access rules, no camera: what is left
// of an answer time is the emulated VM's own (the client, the kernel's socket work, waking the
// vCPUs). It is a measuring stick, not a server: written by hand because no library does this
// little.
//
//   cc -O2 -o poll-floor poll-floor.c && ./poll-floor SOCKET JPEG
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: poll-floor SOCKET JPEG\n");
        return 64;
    }
    FILE *file = fopen(argv[2], "rb");
    if (!file) {
        perror(argv[2]);
        return 1;
    }
    static char jpeg[4 << 20];
    size_t size = fread(jpeg, 1, sizeof jpeg, file);
    fclose(file);
    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
    unlink(argv[1]);
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 64)) {
        perror(argv[1]);
        return 1;
    }
    for (;;) {
        int connection = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (connection < 0)
            continue;
        char request[8192];
        size_t got = 0;
        while (got < sizeof request - 1) {
            ssize_t n = read(connection, request + got, sizeof request - 1 - got);
            if (n <= 0)
                break;
            got += (size_t)n;
            request[got] = 0;
            if (strstr(request, "\r\n\r\n"))
                break;
        }
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        char head[256];
        int length = snprintf(head, sizeof head,
                              "HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\nContent-Length: %zu\r\n"
                              "X-Capture-Time: %ld.%06ld\r\nConnection: close\r\n\r\n",
                              size, (long)now.tv_sec, now.tv_nsec / 1000);
        struct iovec parts[2] = {{head, (size_t)length}, {jpeg, size}};
        if (writev(connection, parts, 2) < 0)
            perror("writev");
        close(connection);
    }
}
