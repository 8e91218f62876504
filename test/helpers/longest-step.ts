/**
 * The longest stretch of this thread's CPU time between two ticks of a 2 ms timer while `work` runs: how long
 * one synchronous step held the event loop. A loaded machine delays timers without using this thread's CPU,
 * so it does not make the figure grow; one long step does.
 */
export async function longestStep(work: () => Promise<unknown>): Promise<number> {
  let last = process.threadCpuUsage();
  let worst = 0;
  const ticker = setInterval(() => {
    const now = process.threadCpuUsage();
    worst = Math.max(worst, (now.user - last.user + now.system - last.system) / 1000);
    last = now;
  }, 2);
  try {
    await work();
    // The tick after the work's last step counts it too.
    await new Promise((resolve) => setTimeout(resolve, 5));
  } finally {
    clearInterval(ticker);
  }
  return worst;
}
