// Package hugeheap puts the Go heap on transparent huge pages where the
// system offers them on request (Linux on x86-64 and arm64, THP "madvise"
// or "always"), and gives mrc-conform the means to keep it there as it
// grows (mrc-conform's hugeHeap).
//
// Why: a program's tables are allocated as it runs, and every fresh
// 4 KiB page costs a page fault. On a virtual machine a fault costs
// 5-15 µs, about as much as judging 10 frames.
//
// Importing the package puts the heap mapped at start on huge pages (Now)
// from an init that runs before most packages' inits, since the package
// imports nothing but runtime, syscall and unsafe: their allocations then
// take no faults. Measured interleaved on a 2-core VM: mrc-conform
// version 10.43 -> 9.96 ms wall (12.75 -> 11.93 ms CPU, 356-373 -> 272
// faults), the judge of a small capture about 2 ms less (blackhole.pcapng
// 17.0 -> 15.0 ms). MRC_HUGEHEAP=off in the environment keeps the init
// from acting.
package hugeheap
