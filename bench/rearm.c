/* SPDX-License-Identifier: MIT */
/*
 * bench_rearm - request/response the way neper's tcp_rr drives epoll: each flow
 * re-arms its interest per transaction (EPOLL_CTL_MOD to EPOLLOUT once a request
 * is read, write the response when told, EPOLL_CTL_MOD back to EPOLLIN), which
 * costs two epoll_ctl calls and an extra epoll_wait per transaction. It is the
 * design `busypoll rr` is measured against (it answers from the receive path).
 *
 *   bench_rearm --server [--bind ADDR] [--port P] [--cpu N]
 *   bench_rearm --client HOST [--port P] [--cpu N] [-F FLOWS] [-l SECONDS]
 *
 * 1-byte requests and responses. The client prints transactions per second.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <busypoll/net.h>

#define MAX_EVENTS 256

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_rearm: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void rearm(int ep, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	if (epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev) < 0)
		die("epoll_ctl");
}

static void nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int server(const struct sockaddr *sa, socklen_t sl)
{
	struct epoll_event evs[MAX_EVENTS], ev = { .events = EPOLLIN };
	int lfd = socket(sa->sa_family, SOCK_STREAM, 0), ep = epoll_create1(0), one = 1, clients = 0;
	char b;

	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, sa, sl) < 0 || listen(lfd, 1024) < 0)
		die("listen");
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	for (;;) {
		int n = epoll_wait(ep, evs, MAX_EVENTS, -1);

		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd) {
				int c = accept(lfd, NULL, NULL);

				nodelay(c);
				ev.events = EPOLLIN;
				ev.data.fd = c;
				epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
				clients++;
			} else if (evs[i].events & EPOLLIN) {
				if (recv(fd, &b, 1, 0) <= 0) {
					close(fd);
					if (--clients == 0)
						return 0;
					continue;
				}
				rearm(ep, fd, EPOLLOUT);
			} else if (evs[i].events & EPOLLOUT) {
				if (send(fd, &b, 1, MSG_NOSIGNAL) < 0)
					die("send");
				rearm(ep, fd, EPOLLIN);
			}
		}
	}
}

static int client(const struct sockaddr *sa, socklen_t sl, int flows, double secs)
{
	struct epoll_event evs[MAX_EVENTS];
	int ep = epoll_create1(0);
	long long tx = 0;
	double end;
	char b = 1;

	for (int i = 0; i < flows; i++) {
		int fd = socket(sa->sa_family, SOCK_STREAM, 0);
		struct epoll_event ev = { .events = EPOLLOUT, .data.fd = fd };

		if (connect(fd, sa, sl) < 0)
			die("connect");
		nodelay(fd);
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	}
	end = now_s() + secs;
	while (now_s() < end) {
		int n = epoll_wait(ep, evs, MAX_EVENTS, 100);

		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (evs[i].events & EPOLLOUT) {
				if (send(fd, &b, 1, MSG_NOSIGNAL) < 0)
					die("send");
				rearm(ep, fd, EPOLLIN);
			} else if (evs[i].events & EPOLLIN) {
				if (recv(fd, &b, 1, 0) <= 0)
					die("recv");
				tx++;
				rearm(ep, fd, EPOLLOUT);
			}
		}
	}
	printf("rearm (neper tcp_rr design)  flows %d  %.0f transactions/s\n", flows, (double)tx / secs);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "server", no_argument, 0, 's' }, { "client", required_argument, 0, 'c' },
		{ "bind", required_argument, 0, 'b' }, { "port", required_argument, 0, 'p' },
		{ "cpu", required_argument, 0, 'C' }, { 0, 0, 0, 0 },
	};
	const char *host = NULL, *bind_addr = "0.0.0.0";
	int srv = 0, port = 7200, cpu = -1, flows = 1, c;
	double secs = 5;
	struct sockaddr_storage ss;
	socklen_t sl;

	while ((c = getopt_long(argc, argv, "F:l:", lopts, NULL)) != -1) {
		switch (c) {
		case 's': srv = 1; break;
		case 'c': host = optarg; break;
		case 'b': bind_addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'C': cpu = atoi(optarg); break;
		case 'F': flows = atoi(optarg); break;
		case 'l': secs = atof(optarg); break;
		default:
			fprintf(stderr, "usage: bench_rearm --server|--client HOST [--port P] [--cpu N] [-F N] [-l S]\n");
			return 2;
		}
	}
	if (srv == !!host || flows < 1 || flows > 10000 || secs <= 0) {
		fprintf(stderr, "bench_rearm: give --server or --client HOST, 1..10000 flows, a duration\n");
		return 2;
	}
	if (cpu >= 0)
		bp_pin_thread(cpu);
	if (bp_parse_addr(srv ? bind_addr : host, (uint16_t)port, &ss, &sl)) {
		fprintf(stderr, "bench_rearm: bad address\n");
		return 2;
	}
	return srv ? server((struct sockaddr *)&ss, sl) : client((struct sockaddr *)&ss, sl, flows, secs);
}
