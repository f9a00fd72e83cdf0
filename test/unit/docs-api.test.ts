// The API reference (`npm run docs:api`, typedoc over lib/index.ts with typedoc.json) builds
// without a single warning (broken links, referenced but unexported types, bad tags), and the
// main entry points carry a doc comment. Converts and validates only: nothing is written.
import { ROOT } from '../support/paths';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Application, Logger, LogLevel, TSConfigReader, TypeDocReader, type ProjectReflection, type Reflection } from 'typedoc';

const ENTRY_POINTS = [
  'open', 'TetFile', 'TetWriter', 'runQuery', 'mergePartials', 'convert', 'exportZarr', 'renderPlot', 'isTetError',
  'ERROR_CODES',
];

class CapturingLogger extends Logger {
  readonly messages: string[] = [];
  override log(message: string, level: LogLevel): void {
    super.log(message, level);
    if (level >= LogLevel.Warn) this.messages.push(`${LogLevel[level]}: ${message}`);
  }
}

/** A reflection's own comment, or (functions) its first signature's. */
function hasComment(r: Reflection): boolean {
  const own = r.comment?.summary.some((p) => p.text.trim() !== '');
  if (own) return true;
  const sigs = (r as { signatures?: Reflection[] }).signatures ?? [];
  return sigs.some((s) => s.comment?.summary.some((p) => p.text.trim() !== ''));
}

describe('API reference (typedoc)', () => {
  let project: ProjectReflection | undefined;
  let logger: CapturingLogger;

  it('converts and validates with no warning', async () => {
    logger = new CapturingLogger();
    const app = await Application.bootstrapWithPlugins(
      { options: join(ROOT, 'typedoc.json'), emit: 'none' },
      [new TypeDocReader(), new TSConfigReader()],
    );
    app.logger = logger;
    project = await app.convert();
    expect(project, logger.messages.join('\n')).toBeDefined();
    app.validate(project!);
    expect(logger.messages).toEqual([]);
  }, 120_000);

  it('documents the main entry points', () => {
    expect(project).toBeDefined();
    const undocumented = ENTRY_POINTS.filter((name) => {
      const r = project!.getChildByName(name);
      return !r || !hasComment(r);
    });
    expect(undocumented).toEqual([]);
  });
});
