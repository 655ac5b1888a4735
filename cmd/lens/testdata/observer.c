/*
 * observer: the command of lens exec's transparency tests
 * (transparency_test.go). It reports what a process observes — its start,
 * the signals it receives, its orphans — so that each scenario can be run
 * with and without lens exec and the two reports compared. Written in C so
 * that nothing between the kernel and the report coalesces or reorders
 * signals: real-time signals are queued by the kernel and counted with
 * sigwaitinfo, exactly.
 *
 * Modes (argv[1]):
 *   state CODE     print what the process sees at its start, exit CODE
 *   signals        count signals until SIGRTMIN+2 (the terminator), then
 *                  print the counts and exit 0; each standard signal is
 *                  also reported when it arrives ("sig NN"), and so are
 *                  SIGRTMIN+1 ("rt 35") and SIGRTMAX ("rt 64")
 *   catchall       handle every signal 1-64 it can (all but SIGKILL,
 *                  SIGSTOP and glibc's 32 and 33), reporting each delivery
 *                  ("sig NN"), until standard input ends or gives a line;
 *                  then print "seen" and the count of each signal received
 *                  ("seen 11=1"), and exit 0
 *   trap SIG       handle signal SIG (numeric), print "ready PID", wait for
 *                  SIG, then print "trapped SIG" and exit 0
 *   exit CODE      exit with CODE
 *   raise SIG      kill itself with signal SIG (numeric)
 *   orphans N      leave N orphans (double fork; a refused fork is
 *                  retried) and wait until no zombie is left in the PID
 *                  namespace
 *   hold           print "ready PID" and wait forever
 *   spawn K CMD... start K copies of CMD in its own process group (a
 *                  launcher: a torch 1.13 agent, a script, Popen), each
 *                  with every signal at its default, ignore every signal
 *                  but SIGCHLD itself (it outlives what is sent to its
 *                  group) and wait for all; exit 0, or 1 if one failed
 *   with SPEC... -- CMD...
 *                  exec CMD with the process state SPEC says (a
 *                  launcher's): block=all (every signal blocked),
 *                  ignore=N,N,... (those signals ignored)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RT_COUNTED 35 /* SIGRTMIN+1 on glibc */
#define RT_END 36     /* SIGRTMIN+2 */
#define RT_MAX 64     /* SIGRTMAX */

static volatile sig_atomic_t counts[65];

/* handler counts a standard signal and says so at once ("sig N"), so that a
 * test can wait for a delivery it cannot order (a terminal's). */
static void handler(int s) {
	char line[] = "sig NN\n";
	counts[s]++;
	line[4] = '0' + s / 10;
	line[5] = '0' + s % 10;
	(void)!write(1, line, sizeof line - 1);
}

static const char *fdkind(int fd) {
	struct stat st;
	if (fcntl(fd, F_GETFD) < 0)
		return "closed";
	if (fstat(fd, &st) < 0)
		return "unknown";
	if (isatty(fd))
		return "tty";
	if (S_ISFIFO(st.st_mode))
		return "pipe";
	if (S_ISCHR(st.st_mode))
		return "chr";
	if (S_ISREG(st.st_mode))
		return "file";
	if (S_ISSOCK(st.st_mode))
		return "socket";
	return "other";
}

/* status prints the SigBlk and SigIgn lines of /proc/self/status. */
static void masks(void) {
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	if (!f)
		return;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "SigBlk:", 7) || !strncmp(line, "SigIgn:", 7))
			printf("%s", line);
	fclose(f);
}

static int state(int argc, char **argv) {
	char cwd[4096];
	printf("argv0: %s\n", argv[0]);
	for (int i = 1; i < argc; i++)
		printf("arg: %s\n", argv[i]);
	printf("cwd: %s\n", getcwd(cwd, sizeof cwd) ? cwd : "?");
	printf("fds: %s %s %s\n", fdkind(0), fdkind(1), fdkind(2));
	printf("umask: %03o\n", (unsigned)umask(0));
	masks();
	fflush(stdout);
	return atoi(argv[2]);
}

static int signals(void) {
	int std[] = {SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM, SIGWINCH, SIGALRM};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	for (size_t i = 0; i < sizeof std / sizeof std[0]; i++)
		sigaction(std[i], &sa, NULL);
	sigset_t rt;
	sigemptyset(&rt);
	sigaddset(&rt, RT_COUNTED);
	sigaddset(&rt, RT_END);
	sigaddset(&rt, RT_MAX);
	sigprocmask(SIG_BLOCK, &rt, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		siginfo_t si;
		int s = sigwaitinfo(&rt, &si);
		if (s < 0)
			continue; /* EINTR: a counted standard signal */
		counts[s]++;
		if (s == RT_END)
			break;
		printf("rt %d\n", s);
		fflush(stdout);
	}
	printf("counts HUP=%d INT=%d QUIT=%d USR1=%d USR2=%d TERM=%d WINCH=%d ALRM=%d RT=%d RTMAX=%d\n",
	       counts[SIGHUP], counts[SIGINT], counts[SIGQUIT], counts[SIGUSR1], counts[SIGUSR2],
	       counts[SIGTERM], counts[SIGWINCH], counts[SIGALRM], counts[RT_COUNTED], counts[RT_MAX]);
	fflush(stdout);
	return 0;
}

static int catchall(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	for (int s = 1; s <= 64; s++)
		sigaction(s, &sa, NULL); /* refused for 9, 19, 32 and 33 */
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	char c;
	while (read(0, &c, 1) == 1 && c != '\n')
		;
	char line[1024] = "seen";
	for (int s = 1; s <= 64; s++)
		if (counts[s])
			snprintf(line + strlen(line), sizeof line - strlen(line), " %d=%d", s, (int)counts[s]);
	printf("%s\n", line);
	fflush(stdout);
	return 0;
}

static volatile sig_atomic_t trapped;

static void trapHandler(int s) { trapped = s; }

static int trap(int s) {
	struct sigaction sa;
	sigset_t block, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = trapHandler;
	if (sigaction(s, &sa, NULL) < 0) {
		printf("sigaction %d: %s\n", s, strerror(errno));
		return 64;
	}
	sigemptyset(&block);
	sigaddset(&block, s);
	sigprocmask(SIG_BLOCK, &block, &old);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!trapped)
		sigsuspend(&old);
	printf("trapped %d\n", (int)trapped);
	fflush(stdout);
	return 0;
}

/* zombies counts the processes in state Z visible in /proc. */
static int zombies(void) {
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], buf[512];
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof buf, f)) {
			char *p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] == 'Z')
				n++;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* forkRetry forks, retrying while the process limit (a pod's pids.max)
 * refuses, as a shell does: only reaped zombies free a slot. */
static pid_t forkRetry(void) {
	struct timespec ms = {0, 1000000};
	pid_t c;
	while ((c = fork()) < 0 && errno == EAGAIN)
		nanosleep(&ms, NULL);
	return c;
}

static int orphans(int n) {
	for (int i = 0; i < n; i++) {
		pid_t c = forkRetry();
		if (c < 0) {
			printf("fork %d failed: %s\n", i, strerror(errno));
			return 1;
		}
		if (c == 0) {
			if (forkRetry() == 0)
				_exit(0); /* the orphan: exits at once, a zombie until reaped */
			_exit(0);
		}
		waitpid(c, NULL, 0);
	}
	/* Wait until the orphans are reaped; the test's own deadline ends a
	 * run in which nobody reaps them. */
	struct timespec ms = {0, 10000000};
	int z;
	while ((z = zombies()) > 0)
		nanosleep(&ms, NULL);
	printf("orphans %d reaped\n", n);
	fflush(stdout);
	return z == 0 ? 0 : 1;
}

static int spawn(int k, char **cmd) {
	int failed = 0;
	/* The launcher outlives the signals sent to its group: it ignores
	 * every signal it can but SIGCHLD; its children get the defaults. */
	for (int s = 1; s < 65; s++)
		if (s != SIGKILL && s != SIGSTOP && s != SIGCHLD)
			signal(s, SIG_IGN);
	for (int i = 0; i < k; i++) {
		pid_t c = fork();
		if (c < 0)
			return 1;
		if (c == 0) {
			for (int s = 1; s < 65; s++)
				if (s != SIGKILL && s != SIGSTOP && s != SIGCHLD)
					signal(s, SIG_DFL);
			execvp(cmd[0], cmd);
			_exit(127);
		}
	}
	for (int st; wait(&st) > 0;)
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed = 1;
	return failed;
}

static int with(int argc, char **argv) {
	int i = 2;
	sigset_t block;
	sigemptyset(&block);
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "block=all")) {
			sigfillset(&block);
		} else if (!strncmp(argv[i], "ignore=", 7)) {
			for (char *p = argv[i] + 7; *p;) {
				signal((int)strtol(p, &p, 10), SIG_IGN);
				if (*p == ',')
					p++;
			}
		} else {
			return 64;
		}
	}
	if (i + 1 >= argc)
		return 64;
	sigprocmask(SIG_SETMASK, &block, NULL);
	execvp(argv[i + 1], argv + i + 1);
	return 127;
}

int main(int argc, char **argv) {
	if (argc < 2)
		return 64;
	if (!strcmp(argv[1], "state") && argc >= 3)
		return state(argc, argv);
	if (!strcmp(argv[1], "signals"))
		return signals();
	if (!strcmp(argv[1], "catchall"))
		return catchall();
	if (!strcmp(argv[1], "trap") && argc >= 3)
		return trap(atoi(argv[2]));
	if (!strcmp(argv[1], "exit") && argc >= 3)
		return atoi(argv[2]);
	if (!strcmp(argv[1], "raise") && argc >= 3) {
		int s = atoi(argv[2]);
		signal(s, SIG_DFL);
		kill(getpid(), s);
		pause();
		return 99;
	}
	if (!strcmp(argv[1], "orphans") && argc >= 3)
		return orphans(atoi(argv[2]));
	if (!strcmp(argv[1], "spawn") && argc >= 4)
		return spawn(atoi(argv[2]), argv + 3);
	if (!strcmp(argv[1], "with"))
		return with(argc, argv);
	if (!strcmp(argv[1], "hold")) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		for (;;)
			pause();
	}
	return 64;
}
