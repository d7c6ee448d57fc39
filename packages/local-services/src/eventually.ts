/**
 * Reads `read` again (every 10 ms, 200 times at most) until `done` accepts its value, and returns that
 * value: for state that settles just after an event a test saw (a job's state once its worker let go).
 * Not a way to wait for the event itself: await the event.
 */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("condition not reached within 200 readings");
}
