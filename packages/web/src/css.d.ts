// A stylesheet is imported for its effect (Vite bundles it: vite.config.ts) and exports nothing;
// this lets the type check resolve such imports (`import "./styles.css"`, entry-client.tsx).
declare module "*.css" {}
