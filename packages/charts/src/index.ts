export { chartCaption, chartPng, chartSvg, CHART_SIZE } from "./render-chart.js";
