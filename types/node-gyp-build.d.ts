// node-gyp-build ships no type declarations.
declare module 'node-gyp-build' {
  function nodeGypBuild(dir: string): unknown;
  namespace nodeGypBuild {
    function resolve(dir: string): string;
  }
  export = nodeGypBuild;
}
