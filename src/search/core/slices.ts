/**
 * Long loops on the extension host's thread, cut into slices: `maybeYield()` gives the event loop
 * a turn once the slice has run `budgetMs`, so other extensions, the chat and search keep
 * answering while an index loads or builds.
 */
export class Slicer {
  private last = performance.now();

  constructor(private readonly budgetMs = 8) {}

  async maybeYield(): Promise<void> {
    if (performance.now() - this.last < this.budgetMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.last = performance.now();
  }
}
