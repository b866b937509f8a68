/// What Netlayer asks of the operating system, in one place: a monotonic clock, the
/// process's fork generation, the signal a thread was interrupted by, a mutex with its
/// condition variable.
package enum Platform {}
