// Progress bars on standard error (cli-progress), one per file and one overall; only on a
// terminal: piped or redirected output gets no bars.
import cliProgress from 'cli-progress';

export interface Bar {
  update(value: number, total?: number, status?: string): void;
}

const NO_BAR: Bar = { update() {} };

export class Progress {
  private readonly multibar: cliProgress.MultiBar | undefined;

  constructor(enabled = true, stream: NodeJS.WriteStream = process.stderr) {
    if (!enabled || !stream.isTTY) return;
    this.multibar = new cliProgress.MultiBar(
      {
        stream,
        format: ' {bar} {percentage}% | {name} {status}',
        barsize: 30,
        hideCursor: true,
        clearOnComplete: false,
        autopadding: true,
      },
      cliProgress.Presets.shades_classic,
    );
  }

  bar(name: string, total: number): Bar {
    if (!this.multibar) return NO_BAR;
    const bar = this.multibar.create(Math.max(1, total), 0, { name, status: '' });
    return {
      update(value, newTotal, status) {
        if (newTotal !== undefined) bar.setTotal(Math.max(1, newTotal));
        bar.update(value, { name, status: status ?? '' });
      },
    };
  }

  /** A line above the bars (or on standard error when there are none). */
  log(line: string): void {
    if (this.multibar) this.multibar.log(`${line}\n`);
    else process.stderr.write(`${line}\n`);
  }

  stop(): void {
    this.multibar?.stop();
  }
}
