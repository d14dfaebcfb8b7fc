// The parts of the bundled libraries the views use (they ship no usable type declarations).
declare module "plotly.js-basic-dist-min" {
  const Plotly: any;
  export default Plotly;
}

declare module "@dagrejs/dagre" {
  const dagre: {
    graphlib: { Graph: new (options?: object) => any };
    layout(graph: any): void;
  };
  export default dagre;
}
