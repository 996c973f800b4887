// CSS imports are bundled by esbuild; for the type checker they are modules with no exports.
declare module '*.css';
