set terminal pngcairo size 1200,640 font 'sans,10'
set output 'latency.png'
set title "p95 latency against users, every level of every search"
set grid ytics
set xtics rotate by -35
set bmargin 8
set xtics norotate
set bmargin
set xlabel 'users'
set ylabel 'p95 (ms, log scale)'
set logscale y
set key outside right top
plot for [i=0:2] 'latency.dat' index i using 1:2 with linespoints pt 7 ps 0.7 title columnheader(2), \
     500 with lines dt 2 lc rgb 'red' title 'p95 limit'
