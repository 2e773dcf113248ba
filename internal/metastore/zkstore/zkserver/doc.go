// Package zkserver runs Apache ZooKeeper servers as processes: Debian's
// zookeeper package (a JVM), standalone or as an ensemble, on free
// loopback ports with data directories the caller owns. It serves
// zktest (tests) and the benchmark commands.
//
// Servers run with tickTime 500 ms, so sessions may last from 1 s to 60 s.
// A server's process gets SIGKILL when the process that started it dies
// (Linux's parent-death signal), so none outlives a command that fails or
// is killed; Kill ends it earlier.
//
// Goroutines: one per running server, waiting for its process to exit.
package zkserver
