set terminal pngcairo size 1280,720 font 'sans,10'
set termoption noenhanced
set output 'chart.png'
set grid ytics
set key inside top right vertical
set ylabel 'IOPS (median)'
set yrange [0:*]
set title 'rbdx IOPS by NBD connection count (4k, total QD 32); fio-rbd dashed, fio-rbd-jN dotted'
set xlabel 'connections (librbd contexts)'
set logscale x 2
set xtics ('1' 1, '2' 2, '4' 4, '8' 8, '16' 16)
$rbdx_randread_4k_qd32_io_uring << EOD
1 11019
2 10692
4 10795
8 7956
16 7842
EOD
$ref_randread_4k_qd32 << EOD
1 17366 17366
2 17366 14125
4 17366 15235
8 17366 14153
16 17366 11673
EOD
$rbdx_randwrite_4k_qd32_io_uring << EOD
1 5565
2 5456
4 5471
8 5614
16 4984
EOD
$ref_randwrite_4k_qd32 << EOD
1 7023 7023
2 7023 0
4 7023 0
8 7023 0
16 7023 0
EOD
plot $rbdx_randread_4k_qd32_io_uring using 1:2 with linespoints lw 2 title 'rbdx io_uring randread-4k-qd32', \
  $ref_randread_4k_qd32 using 1:2 with lines dt 2 title 'fio-rbd randread-4k-qd32', \
  $ref_randread_4k_qd32 using 1:($3>0?$3:1/0) with linespoints dt 3 title 'fio-rbd-jN randread-4k-qd32', \
  $rbdx_randwrite_4k_qd32_io_uring using 1:2 with linespoints lw 2 title 'rbdx io_uring randwrite-4k-qd32', \
  $ref_randwrite_4k_qd32 using 1:2 with lines dt 2 title 'fio-rbd randwrite-4k-qd32'
