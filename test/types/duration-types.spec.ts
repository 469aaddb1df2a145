import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const PROJECT = fileURLToPath(new URL('../../tsconfig.json', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/duration-types.ts', import.meta.url));
const EXPECT_ERROR = '// @ts-expect-error';

/** The project's compiler options, without output. */
function compilerOptions(): ts.CompilerOptions {
  const { config } = ts.readConfigFile(PROJECT, ts.sys.readFile);
  const root = fileURLToPath(new URL('../../', import.meta.url));
  return { ...ts.parseJsonConfigFileContent(config, ts.sys, root).options, noEmit: true };
}

/** Type-checks the fixture with `text` as its source; returns its diagnostics as `line: TS<code> <message>`. */
function typeErrors(
  text: string,
  options: ts.CompilerOptions,
  oldProgram?: ts.Program,
): { errors: string[]; program: ts.Program } {
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, ...rest) =>
    fileName === FIXTURE ? ts.createSourceFile(fileName, text, language) : getSourceFile(fileName, language, ...rest);
  const program = ts.createProgram({ rootNames: [FIXTURE], options, host, oldProgram });
  // The fixture's own diagnostics: checking every file of lib/ too would take several times as long.
  const fixture = program.getSourceFile(FIXTURE);
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getSyntacticDiagnostics(fixture),
    ...program.getSemanticDiagnostics(fixture),
  ];
  const errors = diagnostics.map((diagnostic) => {
    const line = diagnostic.file ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start!).line + 1 : 0;
    return `${line}: TS${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
  });
  return { errors, program };
}

describe('Duration type', () => {
  const source = readFileSync(FIXTURE, 'utf8');
  const lines = source.split('\n');
  /** 1-based numbers of the lines a @ts-expect-error comment marks. */
  const expectedErrorLines = lines.flatMap((line, index) => (line.trim().startsWith(EXPECT_ERROR) ? [index + 2] : []));

  it("rejects '10 minutes' and the other malformed strings, and accepts every documented form; options take any string", () => {
    const options = compilerOptions();
    // An unused @ts-expect-error is itself an error (TS2578): a type accepting '10 minutes' fails here.
    const checked = typeErrors(source, options);
    expect(checked.errors).toEqual([]);

    // Without the comments, each marked line is a type error of its own, and no other line is.
    const unmarked = source.replaceAll(EXPECT_ERROR, '// was expected to fail');
    const { errors } = typeErrors(unmarked, options, checked.program);
    expect(expectedErrorLines.length).toBeGreaterThanOrEqual(6);
    expect(errors.map((error) => Number(error.split(':')[0]))).toEqual(expectedErrorLines);
    for (const error of errors) expect(error).toMatch(/^\d+: TS2322 Type '.*' is not assignable to type /);
  });
});
